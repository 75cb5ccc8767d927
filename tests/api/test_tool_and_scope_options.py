"""Tool names, tool descriptions and ``scope_fields`` are checked where they enter: a name Bedrock or OpenAI would
refuse on the first call, a description that is not text, or an empty field list is an error naming the value."""

from __future__ import annotations

import re
from typing import Any

import pytest

from promptcache.integrations.langgraph import MemoryNode
from promptcache.intention import IntentionCache, IntentionMemory, make_retrieve_memory_tool
from promptcache.memory import TypedMemoryMiddleware, make_reference_tool, make_remember_tool


def test_a_description_that_is_not_text_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match=r"description must be a str, got int: 5"):
        make_retrieve_memory_tool(IntentionMemory(), description=5)  # type: ignore[arg-type]


def test_a_blank_description_is_refused() -> None:
    with pytest.raises(ValueError, match=r"description must be a non-empty text, got ' '"):
        make_retrieve_memory_tool(IntentionMemory(), description=" ")


@pytest.mark.parametrize("name", ["bad name", "", "a.b", "x" * 65, "résumé", "tool\n"])
@pytest.mark.parametrize(
    "factory",
    [
        lambda name: make_retrieve_memory_tool(IntentionMemory(), name=name),
        lambda name: make_remember_tool(None, name=name),
        lambda name: make_reference_tool(None, name=name),
        lambda name: IntentionCache(IntentionMemory(), retrieve_tool_name=name),
    ],
    ids=["retrieve_memory", "remember", "read_reference", "IntentionCache.retrieve_tool_name"],
)
def test_a_tool_name_the_providers_refuse_is_refused(factory: Any, name: str) -> None:
    with pytest.raises(ValueError, match=r"1 to 64 ASCII letters, digits, '_' or '-'.*got "):
        factory(name)


@pytest.mark.parametrize("name", ["retrieve_memory", "a", "get-weather_2", "x" * 64])
def test_names_the_providers_accept_are_accepted(name: str) -> None:
    assert make_retrieve_memory_tool(IntentionMemory(), name=name).name == name


@pytest.mark.parametrize("empty", [[], ()])
@pytest.mark.parametrize(
    "factory",
    [
        lambda fields: make_retrieve_memory_tool(IntentionMemory(), scope_fields=fields),
        lambda fields: make_remember_tool(None, scope_fields=fields),
        lambda fields: IntentionCache(IntentionMemory(), scope_fields=fields),
        lambda fields: TypedMemoryMiddleware(None, scope_fields=fields),
        lambda fields: MemoryNode(scope_fields=fields),
    ],
    ids=["retrieve_memory", "remember", "IntentionCache", "TypedMemoryMiddleware", "MemoryNode"],
)
def test_an_empty_scope_field_list_is_refused(factory: Any, empty: Any) -> None:
    with pytest.raises(
        ValueError, match=re.escape(f"scope_fields must name at least one configurable field, got {empty!r}")
    ):
        factory(empty)
