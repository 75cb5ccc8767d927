"""Type aliases shared by the modules: JSON values and the shapes of read-only mappings.

Use them instead of `Any` where a value is JSON (a parsed log line, a Converse request body, a stored record):

- `JSONValue` / `JSONObject` / `JSONArray`: a value built or returned as JSON (what `orjson.loads` gives).
- `JSONMapping`: a JSON object a function only reads (`Mapping`, so a `dict[str, str]` is accepted too).
- A value read from outside whose shape is not yet checked is `object`, narrowed with `isinstance` before use.

`Any` stays only where a value is truly unknown to the type system (an override of another package's `**kwargs:
Any` signature, a pydantic field of arbitrary type).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias, Union

JSONScalar: TypeAlias = Union[str, int, float, bool, None]
JSONValue: TypeAlias = Union[JSONScalar, list["JSONValue"], dict[str, "JSONValue"]]
JSONObject: TypeAlias = dict[str, JSONValue]
JSONArray: TypeAlias = list[JSONValue]
JSONMapping: TypeAlias = Mapping[str, object]
ObjectSequence: TypeAlias = Sequence[object]

__all__ = ["JSONArray", "JSONMapping", "JSONObject", "JSONScalar", "JSONValue", "ObjectSequence"]
