"""A tool's OpenAI schema, as LangChain's ``convert_to_openai_tool`` writes it, without its Python walk of the schema.

``convert_to_openai_tool(tool)`` on a ``BaseTool`` reads the tool's JSON schema (``tool.tool_call_schema``, a
pydantic model whose ``model_json_schema()`` pydantic keeps, or a dict), copies it while inlining ``$ref``
references (``dereference_refs``: a recursive Python copy, most of the conversion's time), pops the top-level
``definitions`` / ``$defs`` / ``title`` / ``description`` and removes ``title`` keys outside ``properties``
(``_rm_titles``). For a schema holding no ``$ref`` the copy inlines nothing, so the same value comes from one
``orjson`` round trip (a deep copy in C) followed by the same pops and title removal: `openai_tool_schema`.

Rule source: ``langchain_core.utils.function_calling`` (``convert_to_openai_tool``, ``_format_tool_to_openai_function``,
``_convert_pydantic_to_openai_function``, ``_convert_json_schema_to_openai_function``, ``_rm_titles``) and
``langchain_core.utils.json_schema.dereference_refs``, langchain-core 1.8. Anything else (a ``Tool``, which has
its own cases, a schema with a reference, a value JSON cannot hold exactly, a tool whose schema raises) returns
``None`` and the caller converts with LangChain. tests/response_cache/test_tool_schema.py compares the two on
many kinds of tools and names the langchain-core version when they differ.
"""

from __future__ import annotations

import inspect
import math
from typing import Final

import orjson
from langchain_core.tools import BaseTool, Tool
from pydantic import BaseModel

from promptcache._types import JSONObject

__all__ = ["openai_tool_schema"]


def _rm_titles(schema: JSONObject, prev_key: str = "") -> None:
    """LangChain's ``_rm_titles``, in place on a fresh copy: ``title`` keys removed, except a dict-valued one
    directly under ``properties`` (a property named ``title``); lists are left as they are. The copy comes from
    ``orjson.loads``, so every mapping in it is an exact ``dict``."""
    drop = False
    for key, value in schema.items():
        if type(value) is dict:
            if key != "title" or prev_key == "properties":
                _rm_titles(value, key)
            else:
                drop = True
        elif key == "title":
            drop = True
    if drop:
        del schema["title"]


_PROPERTY: Final = BaseTool.__dict__.get("tool_call_schema")  # LangChain's property
_MEMO_NAME: Final = "_tool_call_schema_memo"  # the private attribute the property reads first
_PYDANTIC_GETATTR: Final = BaseModel.__dict__.get("__getattr__")
_MISSING: Final = object()
_DIRECT: dict[type, bool] = {}  # tool class -> can its memo be read from ``__pydantic_private__``


def _reads_memo_directly(cls: type) -> bool:
    """Whether ``cls`` keeps LangChain's ``tool_call_schema`` property, pydantic's ``__getattr__`` and the private
    memo attribute, so that the property's memo is ``tool.__pydantic_private__[_MEMO_NAME]``."""
    direct = _DIRECT.get(cls)
    if direct is None:
        private = getattr(cls, "__private_attributes__", None) or {}
        direct = _DIRECT[cls] = bool(
            _PROPERTY is not None
            and _PYDANTIC_GETATTR is not None
            and inspect.getattr_static(cls, "tool_call_schema", None) is _PROPERTY
            and inspect.getattr_static(cls, "__getattr__", None) is _PYDANTIC_GETATTR
            and _MEMO_NAME in private
            and inspect.getattr_static(cls, _MEMO_NAME, _MISSING) is _MISSING  # no class attribute of that name
        )
    return direct


def _tool_call_schema(tool: BaseTool) -> object:
    """``tool.tool_call_schema``; LangChain's memo read straight from ``__pydantic_private__`` when the property
    would return it (`_reads_memo_directly`, a non-dict ``args_schema``, a memo set): pydantic's ``__getattr__``
    for a private attribute raises and catches three ``AttributeError``s per read, most of this path's cost when
    the schema is already built."""
    if _reads_memo_directly(type(tool)) and not isinstance(tool.__dict__.get("args_schema"), dict):
        private = tool.__pydantic_private__
        memo = private.get(_MEMO_NAME) if private else None
        if memo is not None:
            return memo
    return tool.tool_call_schema


def _json_schema(schema_source: object) -> JSONObject | None:
    """A fresh copy of a tool's JSON schema (its ``tool_call_schema``) when it holds no ``$ref`` and JSON keeps it
    exactly, else ``None``."""
    if isinstance(schema_source, dict):
        raw: object = schema_source
    elif isinstance(schema_source, type) and issubclass(schema_source, BaseModel):
        raw = schema_source.model_json_schema()
    else:
        return None
    try:
        data = orjson.dumps(raw)
    except (TypeError, orjson.JSONEncodeError):  # a value JSON does not hold (orjson has no default here)
        return None
    # bytes.find, not ``in``: ``in`` first tries the operand as an integer (a TypeError raised and cleared)
    if data.find(b'"$ref"') >= 0:  # a reference to inline (or the text "$ref" somewhere: LangChain's path decides)
        return None
    copy: object = orjson.loads(data)
    if not isinstance(copy, dict) or (data.find(b"null") >= 0 and not _finite_raw(raw)):
        return None
    return copy


def _finite_raw(raw: object) -> bool:
    """Whether the original schema holds no NaN or infinity (its copy would hold ``null`` there)."""
    if isinstance(raw, float):
        return math.isfinite(raw)
    if isinstance(raw, dict):
        return all(map(_finite_raw, raw.values()))
    if isinstance(raw, (list, tuple)):
        return all(map(_finite_raw, raw))
    return True


def openai_tool_schema(tool: object) -> JSONObject | None:
    """``convert_to_openai_tool(tool)`` for a ``BaseTool`` (not a ``Tool``) whose schema holds no ``$ref``, else
    ``None`` (convert with LangChain then). Equal to LangChain's value (module docstring); a new dict each call.

    Args:
        tool: any tool-like object; only ``BaseTool`` instances take this path.
    """
    if not isinstance(tool, BaseTool) or isinstance(tool, Tool):
        return None
    try:
        name, description = tool.name, tool.description
        source = _tool_call_schema(tool)  # read once
        schema = _json_schema(source) if source else None
    except Exception:  # noqa: BLE001 - LangChain's path raises or describes it the way it does
        return None
    if schema is None:
        return None
    schema.pop("definitions", None)
    schema.pop("$defs", None)
    title = schema.pop("title", "")
    default_description = schema.pop("description", "")
    _rm_titles(schema)
    function: JSONObject = {
        "name": name or title,
        "description": description or default_description,
        "parameters": schema,
    }
    return {"type": "function", "function": function}
