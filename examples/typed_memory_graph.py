"""Typed memory in a LangGraph StateGraph, offline: what the memory node loads on each turn.

Run:  python examples/typed_memory_graph.py

A user's memories of the four kinds are written to an InMemoryStore; a graph with MemoryNode before the model node
and a MemorySaver checkpointer answers four questions on one thread, then one on a new thread. Each turn prints
which kinds were read from the store and the memory block the model received. References appear only as pointers
(``[id] description``); the last step fetches one with the ``read_reference`` tool, as an agent would.
"""

from __future__ import annotations

import re

from langchain_core.messages import SystemMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.memory import InMemoryStore

from promptcache.integrations.langgraph import MemoryNode, MemoryState
from promptcache.memory import TypedMemoryStore, make_reference_tool
from promptcache.testing import ScriptedChatModel


class State(MessagesState, MemoryState):
    pass


def build(memory: TypedMemoryStore, model: ScriptedChatModel):
    def call_model(state: State) -> dict:
        system = SystemMessage("You are the shipping team's assistant.\n\n" + state.get("memory_prompt", ""))
        return {"messages": [model.invoke([system, *state["messages"]])]}

    builder = StateGraph(State)
    builder.add_node("memory", MemoryNode(memory))
    builder.add_node("model", call_model)
    builder.add_edge(START, "memory")
    builder.add_edge("memory", "model")
    builder.add_edge("model", END)
    return builder.compile(checkpointer=MemorySaver())


def main() -> None:
    memory = TypedMemoryStore(InMemoryStore(), project_state_ttl_s=3600)
    user = "dana"
    memory.put(user, "feedback", "Never paste passwords or tokens into answers.")
    memory.put(user, "user_fact", "Dana leads the shipping-API team and prefers Python examples.")
    memory.put(
        user, "reference", "https://wiki.example.com/shipping/runbook", metadata={"description": "on-call runbook"}
    )
    memory.put(user, "project_state", "ETA for order 42 is 15:00.", subject="eta order 42")
    memory.put(user, "project_state", "ETA for order 42 moved to 17:00 (customs).", subject="eta order 42")
    memory.put(user, "project_state", "Deploy v3.2 to staging is running.", subject="deploy", ttl_s=0.001)  # stale

    model = ScriptedChatModel(replies=["(model reply)"], cycle=True)
    graph = build(memory, model)
    turns = [
        ("t1", "What's the ETA for order 42?"),
        ("t1", "What is the difference between optimistic and pessimistic locking?"),
        ("t1", "Any update on my order?"),
        ("t2", "Where is the runbook?"),
    ]
    for thread, question in turns:
        out = graph.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": thread, "user_id": user}})
        turn = out["memory_turn"]
        read = ", ".join(turn["read"]) or "nothing (per-thread memories come from the checkpoint)"
        print(f"[{thread}] {question}")
        print(f"  conceptual: {turn['conceptual']}; read from the store: {read}")
        print("  memory block:\n    " + out["memory_prompt"].replace("\n", "\n    "))
        print()
    # the pointer in the block is enough to fetch the contents (the user id comes from the config, not the model)
    ref_id = re.search(r"^\[(\w+)\] on-call runbook$", out["memory_prompt"], re.M).group(1)
    contents = make_reference_tool(memory).invoke({"ref_id": ref_id}, {"configurable": {"user_id": user}})
    print(f"read_reference({ref_id!r}) -> {contents}")


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
