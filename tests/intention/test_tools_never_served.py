"""The intention backend across event loops, and the tools the intention cache never serves (remember, artifacts)."""

from __future__ import annotations

import asyncio

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.store.memory import InMemoryStore
from support.followups import _call

from promptcache import IntentionCache, IntentionMemory
from promptcache.intention._middleware import DEFAULT_DENY_TOOLS, SIDE_EFFECT_METADATA_KEY
from promptcache.memory import TypedMemoryStore, make_remember_tool
from promptcache.testing import ScriptedChatModel


def _mark(message) -> str | None:
    return ((message.response_metadata or {}).get("promptcache") or {}).get("intention_cache")


def test_redis_intention_backend_forgets_and_stores_in_later_loops(redis_url, redis_prefix):
    from promptcache.integrations.redis import RedisIntentionBackend

    memory = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix))
    for _ in range(2):
        assert asyncio.run(memory.astore("u1", "weather in paris", {"t": 1}, tool="w", args={}))
        assert asyncio.run(memory.aretrieve("u1", "weather in paris")).result == {"t": 1}
        assert asyncio.run(memory.aforget("u1")) == 1


@pytest.mark.parametrize("deny_tools", [DEFAULT_DENY_TOOLS, ["other"]], ids=["default", "custom-deny-list"])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_remember_under_another_name_is_never_served(deny_tools, mode):
    memory = TypedMemoryStore(InMemoryStore())
    remember = make_remember_tool(memory, name="note_down")
    assert remember.metadata == {SIDE_EFFECT_METADATA_KEY: True}
    intentions = IntentionMemory()
    args = {"kind": "user_fact", "content": "I am vegan"}
    model = ScriptedChatModel(replies=[_call("note_down", args, 1), "ok", _call("note_down", args, 2), "ok"])
    agent = create_agent(
        model, tools=[remember], middleware=[IntentionCache(intentions, serve_repeats=True, deny_tools=deny_tools)]
    )
    config = {"configurable": {"user_id": "u1"}}
    ask = {"messages": [("user", "Remember that I am vegan")]}
    run = agent.invoke if mode == "sync" else (lambda *a: asyncio.run(agent.ainvoke(*a)))
    run(ask, config)
    memory.delete("u1", "user_fact", memory.list("u1", "user_fact")[0].id)
    out = run(ask, config)
    assert _mark(out["messages"][2]) is None
    assert len(memory.list("u1", "user_fact")) == 1 and intentions.retrieve_all("u1", "Remember that I am vegan") == []


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_tool_message_with_an_artifact_is_not_stored(mode):
    @tool
    def get_doc(q: str, tool_call_id: str = "") -> ToolMessage:
        """Fetch a document."""
        return ToolMessage(content=f"summary of {q}", artifact={"doc": q}, tool_call_id=tool_call_id)

    intentions = IntentionMemory()
    model = ScriptedChatModel(replies=[_call("get_doc", {"q": "x"}, 1), "ok"])
    agent = create_agent(model, tools=[get_doc], middleware=[IntentionCache(intentions, serve_repeats=True)])
    config = {"configurable": {"user_id": "u1"}}
    ask = {"messages": [("user", "Get doc x")]}
    out = agent.invoke(ask, config) if mode == "sync" else asyncio.run(agent.ainvoke(ask, config))
    assert out["messages"][2].artifact == {"doc": "x"}
    assert intentions.retrieve_all("u1", "Get doc x") == []
