"""Memory tools used without a store name the missing store."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from support.processors_agents import _call

from promptcache.memory import make_reference_tool, make_remember_tool
from promptcache.testing import ScriptedChatModel


@pytest.mark.parametrize(
    "factory, args",
    [(make_remember_tool, {"kind": "user_fact", "content": "x"}), (make_reference_tool, {"ref_id": "abc123"})],
    ids=["remember", "read_reference"],
)
def test_memory_tools_without_a_store_name_the_missing_store(factory, args):
    """``make_remember_tool()`` / ``make_reference_tool()`` (memory=None: the graph's store) used where there is
    no store: called directly they fail with ``KeyError: '__pregel_runtime'``; in an agent without ``store=``
    with ``TypeError: store must be a langgraph BaseStore, got NoneType``. ``TypedMemoryMiddleware(None)`` and
    ``MemoryNode(None)`` say what is missing (``RuntimeError ... needs an agent store: create_agent(...,
    store=...)``); the tools must too."""
    tool_ = factory()
    config = {"configurable": {"user_id": "u1"}}
    with pytest.raises(RuntimeError, match="store"):
        tool_.invoke(args, config=config)
    model = ScriptedChatModel(replies=[_call(tool_.name, args), "done"])
    with pytest.raises(RuntimeError, match="store"):
        create_agent(model, tools=[tool_]).invoke({"messages": [("user", "hi")]}, config)
