"""IntentionCache with the project's own tools and odd tool results."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.store.memory import InMemoryStore
from support.processors_agents import _cache_mark, _call

from promptcache import (
    IntentionCache,
    IntentionMemory,
    make_retrieve_memory_tool,
)
from promptcache.memory import TypedMemoryStore, make_remember_tool
from promptcache.testing import ScriptedChatModel


def test_intention_cache_never_serves_the_remember_tool_instead_of_writing():
    """``remember`` (``make_remember_tool``) writes a memory: a side effect. ``IntentionCache`` does not deny it
    (no deny prefix matches), so it stores its reply and, with ``serve_repeats=True``, answers the repeated
    request "Remember that I am vegan" from memory -- "saved user_fact memory ..." -- without writing: the memory
    deleted in between is never saved again although the model was told it was."""
    memory = TypedMemoryStore(InMemoryStore())
    intentions = IntentionMemory()
    args = {"kind": "user_fact", "content": "I am vegan"}
    model = ScriptedChatModel(replies=[_call("remember", args, 1), "Saved.", _call("remember", args, 2), "Saved."])
    agent = create_agent(
        model, tools=[make_remember_tool(memory)], middleware=[IntentionCache(intentions, serve_repeats=True)]
    )
    config = {"configurable": {"user_id": "u1"}}
    ask = {"messages": [("user", "Remember that I am vegan")]}
    agent.invoke(ask, config)
    (saved,) = memory.list("u1", "user_fact")
    memory.delete("u1", "user_fact", saved.id)
    out = agent.invoke(ask, config)
    assert _cache_mark(out["messages"][2]) is None  # the tool really ran
    assert [m.content for m in memory.list("u1", "user_fact")] == ["I am vegan"]


def test_served_repeat_of_a_content_and_artifact_tool_keeps_the_artifact():
    """A tool with ``response_format="content_and_artifact"`` gives the model the content and the application
    the artifact (e.g. the retrieved documents, here with a ``datetime``). ``serve_repeats`` answers the repeat
    with the stored content only: ``artifact`` is ``None``, so code reading the artifact breaks on a hit.
    Expected: a served repeat carries the same artifact, or such results are not served (the tool runs)."""
    import datetime

    @tool(response_format="content_and_artifact")
    def get_doc(q: str) -> tuple[str, dict]:
        """Fetch a document."""
        return f"summary of {q}", {"doc_id": 7, "fetched": datetime.datetime(2024, 1, 1)}

    model = ScriptedChatModel(replies=[_call("get_doc", {"q": "x"}, 1), "ok", _call("get_doc", {"q": "x"}, 2), "ok"])
    agent = create_agent(model, tools=[get_doc], middleware=[IntentionCache(IntentionMemory(), serve_repeats=True)])
    config = {"configurable": {"user_id": "u1"}}
    first = agent.invoke({"messages": [("user", "Get doc x")]}, config)["messages"][2]
    again = agent.invoke({"messages": [("user", "Get doc x")]}, config)["messages"][2]
    assert again.content == first.content
    assert again.artifact == first.artifact == {"doc_id": 7, "fetched": datetime.datetime(2024, 1, 1)}


@pytest.mark.parametrize(
    "args",
    [{"intention": 123}, {"intention": None}, {}, {"intention": ["weather"]}],
    ids=["int", "null", "missing", "list"],
)
def test_retrieve_memory_with_a_non_string_intention_goes_back_to_the_model_as_an_error(args):
    intentions = IntentionMemory()
    intentions.store("u1", "weather in paris", {"t": 1}, tool="get_weather", args={"city": "Paris"})
    model = ScriptedChatModel(replies=[_call("retrieve_memory", args), "done"])
    agent = create_agent(model, tools=[make_retrieve_memory_tool(intentions)], middleware=[IntentionCache(intentions)])
    out = agent.invoke({"messages": [("user", "weather?")]}, {"configurable": {"user_id": "u1"}})
    assert out["messages"][2].status == "error" and "intention" in out["messages"][2].content
    assert out["messages"][-1].content == "done"
