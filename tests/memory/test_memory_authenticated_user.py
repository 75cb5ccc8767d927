"""With an authenticated user (``configurable["langgraph_auth_user_id"]``), no per-call input reaches another
user's typed memories or references: ``MemoryNode``, ``TypedMemoryMiddleware``, ``remember`` and
``read_reference`` refuse a differing ``user_id`` or per-call ``scope`` before reading or writing anything."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore

from promptcache.integrations.langgraph import MemoryNode
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore, make_reference_tool, make_remember_tool
from promptcache.memory._references import short_reference_id
from promptcache.testing import ScriptedChatModel

SECRET = "my card number is 4111 1111 1111 1111"


def _auth(user: str, **configurable) -> dict:
    return {"configurable": {"langgraph_auth_user_id": user, **configurable}}


@pytest.fixture
def memory() -> TypedMemoryStore:
    store = TypedMemoryStore(InMemoryStore())
    store.put("alice", "user_fact", SECRET, subject="card")
    return store


def _spoofs(context) -> list[dict]:
    return [
        _auth("bob", user_id="alice"),
        context(_auth("bob"), scope="alice"),
        context(_auth("bob"), scope=None),  # the unscoped memories
    ]


def test_memory_node_refuses_another_users_scope(memory):
    node = MemoryNode(memory)
    state = {"messages": [HumanMessage("what do you know about me?")]}
    for config in _spoofs(TypedMemoryMiddleware.context):
        with pytest.raises(PermissionError, match="differs from the authenticated user .*'bob'"):
            node.invoke(state, config=config)
    assert SECRET not in node.invoke(state, config=_auth("bob"))["memory_prompt"]
    assert SECRET in node.invoke(state, config=_auth("alice", user_id="alice"))["memory_prompt"]


async def test_memory_node_async_refuses_another_users_scope(memory):
    node = MemoryNode(memory)
    with pytest.raises(PermissionError, match="'alice'"):
        await node.ainvoke({"messages": [HumanMessage("hi")]}, config=_auth("bob", user_id="alice"))


def test_middleware_refuses_another_users_scope_before_the_model_sees_anything(memory):
    model = ScriptedChatModel(replies=["ok"], cycle=True)
    agent = create_agent(model, tools=[], middleware=[TypedMemoryMiddleware(memory)])
    for config in _spoofs(TypedMemoryMiddleware.context):
        with pytest.raises(PermissionError, match="'bob'"):
            agent.invoke({"messages": [HumanMessage("what do you know about me?")]}, config=config)
    assert model.calls == 0
    agent.invoke({"messages": [HumanMessage("what do you know about me?")]}, config=_auth("bob"))
    assert all(SECRET not in str(m.content) for m in model.seen[-1])


def test_remember_cannot_write_into_another_users_memories(memory):
    remember = make_remember_tool(memory)
    with pytest.raises(PermissionError, match="'alice'"):
        remember.invoke(
            {"kind": "user_fact", "content": "my card number is 0000"}, config=_auth("bob", user_id="alice")
        )
    assert [m.content for m in memory.list("alice", "user_fact")] == [SECRET]


def test_read_reference_cannot_read_another_users_reference(memory):
    ref = memory.put("alice", "reference", "https://bank.example/statements/alice", metadata={"description": "bank"})
    read = make_reference_tool(memory)
    for config in _spoofs(TypedMemoryMiddleware.context):
        with pytest.raises(PermissionError, match="'bob'"):
            read.invoke({"ref_id": short_reference_id(ref)}, config=config)
    assert "no reference" in read.invoke({"ref_id": short_reference_id(ref)}, config=_auth("bob"))
    assert read.invoke({"ref_id": short_reference_id(ref)}, config=_auth("alice")).endswith("/statements/alice")


def test_opting_in_trusts_the_configs_scope(memory):
    node = MemoryNode(memory, allow_scope_override=True)
    update = node.invoke({"messages": [HumanMessage("hi")]}, config=_auth("bob", user_id="alice"))
    assert SECRET in update["memory_prompt"]


def test_an_empty_user_id_is_an_error_not_the_unscoped_memories(memory):
    memory.put(None, "user_fact", "an unscoped fact")
    with pytest.raises(ValueError, match=r"configurable\['user_id'\].*''"):
        MemoryNode(memory).invoke({"messages": [HumanMessage("hi")]}, config={"configurable": {"user_id": ""}})
