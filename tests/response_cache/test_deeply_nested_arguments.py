"""A prompt nested deeper than Python's recursion limit still gets a key: the user's call never fails on it."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from promptcache import InMemoryServerCache, ResponseCache, with_processors
from promptcache._keys import canonical_json
from promptcache.testing import ScriptedChatModel


def _messages(depth: int, leaf: int = 1) -> list:
    deep = json.loads("[" * depth + str(leaf) + "]" * depth)
    return [
        HumanMessage("q"),
        AIMessage("", tool_calls=[{"name": "f", "args": {"a": deep}, "id": "t1"}]),
        ToolMessage("r", tool_call_id="t1"),
        HumanMessage("again"),
    ]


def test_tool_arguments_900_levels_deep_are_cached_and_served():
    model = ScriptedChatModel(replies=["hi", "other"])
    chat = with_processors(model, [ResponseCache(InMemoryServerCache())])
    assert chat.invoke(_messages(900)).content == "hi"
    assert chat.invoke(_messages(900)).content == "hi"  # the same prompt: served
    assert model.calls == 1
    assert chat.invoke(_messages(900, leaf=2)).content == "other"  # a different leaf deep down: a new key
    assert model.calls == 2


def _nested(depth: int, leaf: int) -> list:
    value: list = [leaf]
    for _ in range(depth):
        value = [value]
    return value


def test_the_deep_part_is_hashed_by_structure_and_leaves():
    assert canonical_json(_nested(5000, 1)) == canonical_json(_nested(5000, 1))
    assert canonical_json(_nested(5000, 1)) != canonical_json(_nested(5000, 2))
    assert canonical_json(_nested(5000, 1)) != canonical_json(_nested(4999, 1))
