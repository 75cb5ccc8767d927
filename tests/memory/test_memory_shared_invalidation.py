"""Two workers (two ``TypedMemoryStore`` objects, each with its own node or middleware and its own connection) on
one real PostgresStore: a user fact deleted or replaced by one is gone from the other's next turn, even though the
other loaded the thread's memories before and kept them in state."""

from __future__ import annotations

import uuid

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.store.postgres import PostgresStore
from support.memory import purge_prefix

from promptcache.integrations.langgraph import MemoryNode
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore
from promptcache.testing import ScriptedChatModel

CARD = "my card number is 4111 1111 1111 1111"


@pytest.fixture
def workers(postgres_url):
    """Two workers' memory stores: same database and prefix, separate connections and objects."""
    prefix = ("pctest", uuid.uuid4().hex[:12])
    with PostgresStore.from_conn_string(postgres_url) as a, PostgresStore.from_conn_string(postgres_url) as b:
        a.setup()
        try:
            yield TypedMemoryStore(a, prefix=prefix), TypedMemoryStore(b, prefix=prefix)
        finally:
            purge_prefix(a, prefix)


def _turn(node: MemoryNode, state: dict, question: str) -> dict:
    state = {**state, "messages": [*state.get("messages", []), HumanMessage(question)]}
    return {**state, **node.invoke(state, {"configurable": {"user_id": "u1"}})}


def test_a_fact_deleted_by_another_worker_is_gone_from_the_next_turn(workers):
    mem_a, mem_b = workers
    card = mem_a.put("u1", "user_fact", CARD, subject="card")
    node_a, node_b = MemoryNode(mem_a), MemoryNode(mem_b)
    state = _turn(node_a, {}, "hello")
    assert CARD in state["memory_prompt"]
    state = _turn(node_a, state, "and again")  # worker A serves the thread from state: no reload
    assert "user_fact" not in state["memory_turn"]["read"]
    mem_b.delete("u1", "user_fact", card.id)  # worker B forgets the card number
    state = _turn(node_a, state, "what do you know about me?")
    assert CARD not in state["memory_prompt"]
    assert state["memory_turn"]["read"][:3] == ["feedback", "user_fact", "reference"]  # reloaded for the delete
    assert CARD not in _turn(node_b, state, "still there?")["memory_prompt"]


def test_a_fact_replaced_by_another_worker_is_replaced_in_the_next_turn(workers):
    mem_a, mem_b = workers
    mem_a.put("u1", "user_fact", "my favourite colour is blue", subject="colour")
    node_a = MemoryNode(mem_a)
    state = _turn(node_a, {}, "hello")
    assert "blue" in state["memory_prompt"]
    mem_b.put("u1", "user_fact", "my favourite colour is green", subject="colour")  # replaces the blue one
    state = _turn(node_a, state, "which colour?")
    assert "green" in state["memory_prompt"] and "blue" not in state["memory_prompt"]
    state = _turn(node_a, state, "and now?")  # nothing written since: served from state again
    assert "user_fact" not in state["memory_turn"]["read"]


async def test_async_turns_see_another_workers_delete(workers):
    mem_a, mem_b = workers
    card = await mem_a.aput("u1", "user_fact", CARD, subject="card")
    node_a = MemoryNode(mem_a)
    config = {"configurable": {"user_id": "u1"}}
    state = {"messages": [HumanMessage("hello")]}
    state = {**state, **await node_a.ainvoke(state, config)}
    assert CARD in state["memory_prompt"]
    await mem_b.adelete("u1", "user_fact", card.id)
    state = {**state, "messages": [*state["messages"], HumanMessage("what do you know?")]}
    assert CARD not in (await node_a.ainvoke(state, config))["memory_prompt"]


def test_middleware_agents_of_two_workers_share_invalidation(workers):
    mem_a, mem_b = workers
    card = mem_a.put("u1", "user_fact", CARD, subject="card")
    model = ScriptedChatModel(replies=["ok"], cycle=True)
    saver = MemorySaver()  # the thread's checkpoints, as both workers would see them
    agent_a = create_agent(model, tools=[], middleware=[TypedMemoryMiddleware(mem_a)], checkpointer=saver)
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}", "user_id": "u1"}}
    agent_a.invoke({"messages": [HumanMessage("hello")]}, config)
    assert CARD in model.seen[-1][0].content
    mem_b.delete("u1", "user_fact", card.id)
    agent_a.invoke({"messages": [HumanMessage("what do you know about me?")]}, config)
    assert CARD not in model.seen[-1][0].content
