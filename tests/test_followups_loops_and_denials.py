"""Follow-ups of the processor/agent review: per-event-loop Redis clients, tools the intention cache never serves
(``remember`` under any name, results with an artifact), per-call memory scope checks, memory tools without a
store (async twins included)."""

from __future__ import annotations

import asyncio
import gc

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.store.memory import InMemoryStore

from promptcache import IntentionCache, IntentionMemory
from promptcache.intention import DEFAULT_DENY_TOOLS, SIDE_EFFECT_METADATA_KEY
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore, make_reference_tool, make_remember_tool
from promptcache.testing import ScriptedChatModel


def _call(name: str, args: dict, i: int = 0) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{name}-{i}"}])


def _mark(message) -> str | None:
    return ((message.response_metadata or {}).get("promptcache") or {}).get("intention_cache")


# -- Redis: one async client per event loop ----------------------------------------------------------------------
def test_redis_url_backend_gives_each_event_loop_its_own_client(redis_url, redis_prefix):
    from promptcache.integrations.redis import RedisCache

    cache = RedisCache(url=redis_url, prefix=redis_prefix)
    cache.set("k", b"v")
    assert cache.async_client is None  # no running loop here

    async def read_twice() -> tuple[object, bytes | None, bytes | None]:
        first = cache.async_client
        assert cache.async_client is first  # one client per loop, reused
        value = await cache.aget("k")
        await cache.aclose()  # closes this loop's client; the next call makes a new one
        again = await cache.aget("k")
        assert cache.async_client is not first
        await cache.aclose()
        return first, value, again

    one = asyncio.run(read_twice())
    two = asyncio.run(read_twice())
    assert one[1:] == two[1:] == (b"v", b"v") and one[0] is not two[0]
    assert asyncio.run(cache.aget("k")) == b"v"
    cache.close()  # drops the clients of closed loops
    gc.collect()
    assert len(cache._async_by_loop) == 0 and cache.failures == 0


def test_redis_given_async_client_is_used_as_given(redis_url, redis_prefix):
    import redis
    import redis.asyncio as aioredis

    from promptcache.integrations.redis import RedisCache

    async def run() -> bytes | None:
        given = aioredis.Redis.from_url(redis_url)
        cache = RedisCache(redis.Redis.from_url(redis_url), async_client=given, prefix=redis_prefix)
        assert cache.async_client is given
        await cache.aset("k", b"v")
        value = await cache.aget("k")
        await cache.aclose()
        cache.close()
        return value

    assert asyncio.run(run()) == b"v"


def test_redis_intention_backend_forgets_and_stores_in_later_loops(redis_url, redis_prefix):
    from promptcache.integrations.redis import RedisIntentionBackend

    memory = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix))
    for _ in range(2):
        assert asyncio.run(memory.astore("u1", "weather in paris", {"t": 1}, tool="w", args={}))
        assert asyncio.run(memory.aretrieve("u1", "weather in paris")).result == {"t": 1}
        assert asyncio.run(memory.aforget("u1")) == 1


# -- IntentionCache: tools it never stores nor serves --------------------------------------------------------------
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


# -- typed memory: per-call scope, tools without a store -------------------------------------------------------
@pytest.mark.parametrize("scope", [None, 7, "alice"])
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
