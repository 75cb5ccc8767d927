"""The default key's memo per tool list object (plugin/response_cache/_steady.py): after it remembered a list, every
change to the list or to a tool's schema parts gives the key a request with fresh objects gets."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import ModelRequest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

import promptcache.response_cache._steady as st
from promptcache.response_cache._keys import request_key
from promptcache.testing import ScriptedChatModel


class Args(BaseModel):
    order: str = Field(description="The order id.")


class OtherArgs(BaseModel):
    order: str = Field(description="The order id, again.")


def make(name: str, description: str = "Look an order up.", args: Any = Args, extras: Any = None) -> StructuredTool:
    made = StructuredTool.from_function(lambda order: order, name=name, description=description, args_schema=args)
    made.extras = extras
    return made


MODEL = ScriptedChatModel(temperature=0.3)
MESSAGES = [HumanMessage("where is my order?")]


def key(tools: list[Any]) -> str:
    request = ModelRequest(model=MODEL, messages=MESSAGES, system_message=SystemMessage("s"), tools=tools)
    return request_key(request, "bot", None)


def fresh_key(tools: list[Any]) -> str:
    """The key of the same tools as new objects (nothing memoised about them)."""
    return key([make(t.name, t.description, t.args_schema, t.extras) for t in tools])


@pytest.mark.parametrize(
    "edit",
    ["description", "name", "args_schema", "extras", "append", "replace", "pop"],
)
def test_a_change_after_the_list_was_remembered_gives_the_fresh_key(edit: str) -> None:
    tools = [make("lookup"), make("cancel")]
    before = key(tools)
    assert st._TOOLS_SEEN[id(tools)][1] is None  # seen once: nothing remembered yet
    assert key(tools) == before == fresh_key(tools)
    assert st._TOOLS_SEEN[id(tools)][1] == tuple(tools)
    if edit == "description":
        tools[0].description = "Look an order up, now by its number."
    elif edit == "name":
        tools[1].name = "cancel_order"
    elif edit == "args_schema":
        tools[0].args_schema = OtherArgs
    elif edit == "extras":
        tools[0].extras = {"cache_control": {"type": "ephemeral"}}
    elif edit == "append":
        tools.append(make("refund"))
    elif edit == "replace":
        tools[1] = make("cancel", "Cancel an order.")
    elif edit == "pop":
        tools.pop()
    after = key(tools)
    assert after == fresh_key(tools)
    assert (after == before) == (edit == "extras")  # extras do not enter the OpenAI schema of a StructuredTool
    assert key(tools) == after  # remembered again, from the changed objects


def test_a_list_holding_a_dict_schema_is_not_remembered_by_list() -> None:
    schema = {"type": "function", "function": {"name": "refund", "description": "Refund.", "parameters": {}}}
    tools = [make("lookup"), schema]
    before = key(tools)
    assert key(tools) == before and st._TOOLS_SEEN[id(tools)][1] is None  # seen, nothing remembered
    schema["function"]["description"] = "Refund an order."  # a dict edited in place
    assert key(tools) != before


def test_the_same_unchanged_list_skips_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = [make("lookup"), make("cancel")]
    before = key(tools)
    assert key(tools) == before  # remembered from the second call
    calls: list[object] = []
    general = st.tools_digest
    monkeypatch.setattr(st, "tools_digest", lambda t: calls.append(t) or general(t))
    assert key(tools) == before and calls == []
    tools[0].description = "Changed."
    after = key(tools)
    assert len(calls) == 1 and after == fresh_key(tools)
