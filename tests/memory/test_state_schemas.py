"""MemoryState composes with LangGraph's states; the two misuses give a clear error, a missing scope one warning."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
from langchain.agents.middleware import AgentState
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from typing_extensions import TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the shared CountingStore
from support.memory import CountingStore  # noqa: E402

from promptcache.integrations.langgraph import MemoryNode, MemoryState, MemoryStateError  # noqa: E402
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore  # noqa: E402
from promptcache.memory._policy import MEMORY_STATE_KEYS  # noqa: E402

PROMPT = "Rules:\nKeep answers short.\n\nCurrent state:\nRelease 2.3 ships on 12 May."


class MixedState(MessagesState, MemoryState):
    pass


class AgentMixedState(AgentState, MemoryState):
    pass


class NoMessages(TypedDict, total=False):
    memory_scope: str
    memory_version: str
    memory_feedback: list
    memory_user_facts: list
    memory_references: list
    memory_project_state: list
    memory_prompt: str
    memory_turn: dict
    question: str


def _memory(raw=None) -> TypedMemoryStore:
    memory = TypedMemoryStore(raw if raw is not None else CountingStore())
    memory.put("u1", "feedback", "Keep answers short.")
    memory.put("u1", "project_state", "Release 2.3 ships on 12 May.", subject="release 2.3 date")
    return memory


def _graph(schema, memory, seen: list, **node_kw):
    def model(state):
        seen.append(state.get("memory_prompt"))
        return {"messages": [("ai", "ok")]} if "messages" in state else {}

    builder = StateGraph(schema)
    builder.add_node("memory", MemoryNode(memory, **node_kw))
    builder.add_node("model", model)
    builder.add_edge(START, "memory")
    builder.add_edge("memory", "model")
    builder.add_edge("model", END)
    return builder.compile(checkpointer=MemorySaver())


def test_memory_state_is_messages_state_plus_the_memory_keys():
    assert set(MemoryState.__annotations__) == {"messages", *MEMORY_STATE_KEYS}
    assert MemoryState.__annotations__["messages"] == MessagesState.__annotations__["messages"]


@pytest.mark.parametrize("schema", [MemoryState, MixedState, AgentMixedState], ids=["alone", "mixed", "agent"])
def test_graphs_on_the_documented_states_work(schema):
    seen: list = []
    graph = _graph(schema, _memory(), seen)
    config = {"configurable": {"thread_id": "t", "user_id": "u1"}}
    out = graph.invoke({"messages": [("user", "When does release 2.3 ship?")]}, config)
    out = graph.invoke({"messages": [("user", "And what is blocking it?")]}, config)
    assert seen == [PROMPT, PROMPT]  # the model node sees the block on both turns
    assert [m.content for m in out["messages"]] == [
        "When does release 2.3 ship?",
        "ok",
        "And what is blocking it?",
        "ok",
    ]
    assert out["memory_turn"] == {
        "question": "And what is blocking it?",
        "conceptual": False,
        "read": ["project_state"],
    }


def test_a_graph_on_messages_state_alone_raises_naming_the_missing_key():
    raw = CountingStore()
    memory = _memory(raw)
    raw.ops.clear()
    graph = _graph(MessagesState, memory, [])
    with pytest.raises(MemoryStateError) as err:
        graph.invoke({"messages": [("user", "When does release 2.3 ship?")]}, {"configurable": {"thread_id": "t"}})
    assert str(err.value).startswith("MemoryNode: the graph state has no 'memory_scope' key (missing: memory_scope, ")
    assert "StateGraph(MemoryState) or class State(MessagesState, MemoryState)" in str(err.value)
    assert raw.reads() == 0  # raised before anything was read


def test_a_state_without_messages_raises_naming_the_key():
    raw = CountingStore()
    memory = _memory(raw)
    raw.ops.clear()
    graph = _graph(NoMessages, memory, [])
    with pytest.raises(MemoryStateError, match=r"^MemoryNode: the state has no 'messages' key \(got \['question'\]\)"):
        graph.invoke({"question": "When does release 2.3 ship?"}, {"configurable": {"thread_id": "t", "user_id": "u1"}})
    node = MemoryNode(memory, messages_key="chat")
    with pytest.raises(MemoryStateError, match=r"no 'chat' key \(got \['messages'\]\).*pass messages_key= naming it"):
        node.invoke({"messages": []}, {"configurable": {"user_id": "u1"}})
    assert raw.reads() == 0
    assert isinstance(MemoryStateError("x"), KeyError)


def test_no_scope_warns_once_per_node(caplog):
    memory = _memory()
    node = MemoryNode(memory)
    state = {"messages": [("user", "When does release 2.3 ship?")]}
    with caplog.at_level(logging.WARNING, logger="promptcache.memory"):
        first = node.invoke(state, {"configurable": {}})
        node.invoke(state, {"configurable": {}})
        node.invoke(state, {"configurable": {"user_id": "u1"}})
        MemoryNode(memory, scope=None).invoke(state, {})  # unscoped on purpose: no warning
        MemoryNode(memory).invoke(state, {"configurable": {"user_id": "u1"}})  # a scope: no warning
    warnings = [r.getMessage() for r in caplog.records if r.name == "promptcache.memory"]
    assert warnings == [
        "MemoryNode found no scope (no configurable['user_id'] / configurable['langgraph_auth_user_id'], no "
        "per-call scope, no scope= argument): using the unscoped memories; pass the user's id as "
        "configurable['user_id'], or MemoryNode(scope=None) to mean unscoped on purpose"
    ]
    assert first["memory_scope"] == "_unscoped" and first["memory_prompt"] == ""  # the unscoped memories: none here


def test_middleware_warns_once_too(caplog):
    from langchain.agents import create_agent

    from promptcache.testing import ScriptedChatModel

    agent = create_agent(
        ScriptedChatModel(replies=["ok"], cycle=True),
        tools=[],
        middleware=[TypedMemoryMiddleware(_memory())],
        checkpointer=MemorySaver(),
    )
    with caplog.at_level(logging.WARNING, logger="promptcache.memory"):
        for _ in range(2):
            agent.invoke({"messages": [("user", "When does release 2.3 ship?")]}, {"configurable": {"thread_id": "t"}})
    warnings = [r.getMessage() for r in caplog.records if r.name == "promptcache.memory"]
    assert len(warnings) == 1 and warnings[0].startswith("TypedMemoryMiddleware found no scope (no configurable")
    assert warnings[0].endswith("or TypedMemoryMiddleware(scope=None) to mean unscoped on purpose")


async def test_async_node_checks_the_same():
    node = MemoryNode(_memory())
    with pytest.raises(MemoryStateError, match="no 'messages' key"):
        await node.ainvoke({}, {"configurable": {"user_id": "u1"}})
    out = await node.ainvoke(
        {"messages": [("user", "When does release 2.3 ship?")]}, {"configurable": {"user_id": "u1"}}
    )
    assert out["memory_prompt"] == PROMPT


def test_middleware_state_schema_is_agent_state_plus_memory_state():
    schema = TypedMemoryMiddleware(TypedMemoryStore()).state_schema
    assert set(schema.__annotations__) == {*AgentState.__annotations__, *MEMORY_STATE_KEYS}
    assert schema.__annotations__["messages"] == AgentState.__annotations__["messages"]
