"""The ResponseCache key is the resolved prompt: it covers the typed-memory block whatever the middleware order."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.checkpoint.memory import MemorySaver
from langgraph.store.memory import InMemoryStore
from support.processors_agents import _cache_mark, _call

from promptcache import (
    InMemoryServerCache,
    IntentionCache,
    IntentionMemory,
    ResponseCache,
    make_retrieve_memory_tool,
)
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore
from promptcache.testing import ScriptedChatModel


@pytest.mark.parametrize("order", ["cache-first", "memory-first"])
def test_response_cache_never_replays_an_answer_given_on_other_memories(order):
    """The cache "replays a whole model reply when the resolved prompt repeats". With ``ResponseCache`` listed
    before ``TypedMemoryMiddleware`` (the outer processor), its key is computed before the memory block is added,
    although ``before_agent`` has already loaded it: after the user's project state changes (ETA 15:00 -> 17:00),
    the same question is a hit and replays the stale ``15:00`` answer, while the model would now see 17:00. The
    memory block is part of the resolved prompt in either order."""
    memory = TypedMemoryStore(InMemoryStore())
    memory.put("u1", "project_state", "ETA for order 42 is 15:00", subject="eta order 42")
    model = ScriptedChatModel(replies=["It arrives at 15:00.", "It arrives at 17:00."])
    rc, tm = ResponseCache(InMemoryServerCache()), TypedMemoryMiddleware(memory)
    agent = create_agent(model, tools=[], middleware=[rc, tm] if order == "cache-first" else [tm, rc])
    config = {"configurable": {"user_id": "u1"}}
    ask = {"messages": [("user", "When does order 42 arrive?")]}
    assert agent.invoke(ask, config)["messages"][-1].content == "It arrives at 15:00."
    memory.put("u1", "project_state", "ETA for order 42 is 17:00", subject="eta order 42")
    reply = agent.invoke(ask, config)["messages"][-1]
    assert reply.content == "It arrives at 17:00.", _cache_mark(reply)
    assert model.calls == 2


def test_shared_response_cache_never_gives_one_user_an_answer_built_on_anothers_memories():
    """Same root cause, across users: a shared cache (``scope=None``, e.g. an FAQ cache) listed before the memory
    middleware gives Bob the answer the model wrote for Alice from *her* memories ("vegan recipe"), although Bob's
    resolved prompt (his own facts) differs. With the memory middleware first, Bob gets his own answer."""
    memory = TypedMemoryStore(InMemoryStore())
    memory.put("alice", "user_fact", "Alice is vegan.")
    memory.put("bob", "user_fact", "Bob is allergic to nuts.")
    model = ScriptedChatModel(replies=["A vegan recipe for Alice.", "A nut-free recipe for Bob."])
    agent = create_agent(
        model, tools=[], middleware=[ResponseCache(InMemoryServerCache(), scope=None), TypedMemoryMiddleware(memory)]
    )
    ask = {"messages": [("user", "Suggest a dinner.")]}
    agent.invoke(ask, {"configurable": {"user_id": "alice"}})
    reply = agent.invoke(ask, {"configurable": {"user_id": "bob"}})["messages"][-1]
    assert reply.content == "A nut-free recipe for Bob.", _cache_mark(reply)


@pytest.mark.parametrize("order", list(itertools.permutations(["rc", "tm", "ic"])), ids="-".join)
def test_all_three_middlewares_together_in_any_order(order):
    ran: list[str] = []

    @tool
    def get_weather(city: str) -> dict:
        """Current weather for a city."""
        ran.append(city)
        return {"city": city, "temp_c": 21}

    memory = TypedMemoryStore(InMemoryStore())
    memory.put("u1", "feedback", "Be brief.")
    intentions = IntentionMemory()
    procs = {
        "rc": ResponseCache(InMemoryServerCache()),
        "tm": TypedMemoryMiddleware(memory),
        "ic": IntentionCache(intentions, serve_repeats=True),
    }
    model = ScriptedChatModel(replies=[_call("get_weather", {"city": "Paris"}), "21 C."])
    agent = create_agent(
        model,
        tools=[get_weather, make_retrieve_memory_tool(intentions)],
        middleware=[procs[p] for p in order],
        checkpointer=MemorySaver(),
    )
    ask = {"messages": [("user", "Weather in Paris?")]}
    agent.invoke(ask, {"configurable": {"user_id": "u1", "thread_id": "t1"}})
    out = asyncio.run(agent.ainvoke(ask, {"configurable": {"user_id": "u1", "thread_id": "t2"}}))
    assert [_cache_mark(m) for m in out["messages"][1:]] == ["hit", "hit", "hit"]
    assert out["messages"][-1].content == "21 C." and model.calls == 2 and ran == ["Paris"]
    assert "Be brief." in model.seen[0][0].content


def test_agent_abatch_of_many_users_with_memory_and_cache_never_mixes_them(redis_cache):
    memory = TypedMemoryStore(InMemoryStore())
    n = 12
    for i in range(n):
        memory.put(f"u{i}", "user_fact", f"fact of u{i}")
    model = ScriptedChatModel(replies=["ok"], cycle=True)
    agent = create_agent(
        model,
        tools=[],
        system_prompt="sys",
        checkpointer=MemorySaver(),
        middleware=[TypedMemoryMiddleware(memory), ResponseCache(redis_cache)],
    )
    configs = [{"configurable": {"user_id": f"u{i}", "thread_id": f"t{i}"}} for i in range(n)]
    inputs = [{"messages": [("user", f"question from u{i}")]} for i in range(n)]
    outs = asyncio.run(agent.abatch(inputs, configs))
    assert [o["memory_scope"] for o in outs] == [f"u{i}" for i in range(n)]
    assert model.calls == n
    for seen in model.seen:
        user = seen[-1].content.split()[-1]
        system_text = seen[0].content  # a string system prompt stays a string: the prompt, then the memory block
        assert system_text.count("fact of") == 1 and f"fact of {user}" in system_text
