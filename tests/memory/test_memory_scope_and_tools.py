"""Per-call memory scope checks, and memory tools without a store (async twins too)."""

from __future__ import annotations

import asyncio

import pytest
from langchain.agents import create_agent
from support.followups import _call

from promptcache.memory import TypedMemoryMiddleware, make_reference_tool, make_remember_tool
from promptcache.testing import ScriptedChatModel


@pytest.mark.parametrize("scope", [None, "7", "alice"])
def test_memory_context_accepts_a_valid_scope(scope):
    config = TypedMemoryMiddleware.context(scope=scope)
    assert config["configurable"]["promptcache.memory"] == {"scope": scope}


def test_memory_context_rejects_the_reserved_unscoped_label_and_names_it():
    with pytest.raises(ValueError, match="_unscoped"):
        TypedMemoryMiddleware.context(scope="_unscoped")
    config = {"configurable": {}}
    with pytest.raises(ValueError, match="a.b"):
        TypedMemoryMiddleware.apply_context(config, scope="a.b")
    assert config == {"configurable": {}}  # nothing written


@pytest.mark.parametrize(
    "factory, args",
    [(make_remember_tool, {"kind": "user_fact", "content": "x"}), (make_reference_tool, {"ref_id": "abc123"})],
    ids=["remember", "read_reference"],
)
def test_memory_tools_without_a_store_name_it_in_async_calls_too(factory, args):
    tool_ = factory()
    config = {"configurable": {"user_id": "u1"}}
    with pytest.raises(RuntimeError, match=rf"{factory.__name__}\(memory=None\) needs a store"):
        asyncio.run(tool_.ainvoke(args, config=config))
    model = ScriptedChatModel(replies=[_call(tool_.name, args), "done"])
    with pytest.raises(RuntimeError, match="store="):
        asyncio.run(create_agent(model, tools=[tool_]).ainvoke({"messages": [("user", "hi")]}, config))
