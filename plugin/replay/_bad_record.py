"""``BadRecord``, the error of a malformed logged record, and ``_short``, the value as its messages show it."""

from __future__ import annotations

import json

import orjson

from promptcache._errors import PromptCacheError

from ._jsonpos import JSONPath

__all__ = ["BadRecord"]


class BadRecord(PromptCacheError, ValueError):
    """A malformed record: ``where`` is the path (keys/indices) below the record, ``reason`` says what is wrong."""

    def __init__(self, where: JSONPath, reason: str) -> None:
        super().__init__(reason)
        self.where, self.reason = where, reason


def _short(value: object, limit: int = 60) -> str:
    """``value`` as short JSON (strings as ``repr``) for an error message; never raises."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = orjson.dumps(value, default=repr).decode()
        except TypeError:  # an integer past 64 bits, or nested deeper than orjson's 255 levels
            try:
                text = json.dumps(value, default=repr, separators=(",", ":"), ensure_ascii=False)
            except RecursionError:
                text = f"a {type(value).__name__} nested too deeply to show"
            except ValueError:  # an integer of more digits than Python converts to text
                text = "a number too large to show"
    return text if len(text) <= limit else text[: limit - 3] + "..."
