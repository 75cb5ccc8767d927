"""A scope (tenant) id is a string: an int id is refused before anything is read or written, so ``1`` and ``"1"``
can never name the same entries (ResponseCache, IntentionMemory, retrieve_memory)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from promptcache import InMemoryServerCache, IntentionMemory, ResponseCache, make_retrieve_memory_tool, with_processors
from promptcache.testing import ScriptedChatModel


def _cached(cache: InMemoryServerCache, reply: str):
    return with_processors(ScriptedChatModel(replies=[AIMessage(reply)], cycle=True), [ResponseCache(cache)])


def test_an_int_user_id_is_refused_by_the_response_cache_and_stores_nothing() -> None:
    cache = InMemoryServerCache()
    with pytest.raises(TypeError, match=r"user_id.* must be a string or None, got int: 1 \(pass str\(1\)"):
        _cached(cache, "private of 1").invoke([HumanMessage("q")], config={"configurable": {"user_id": 1}})
    assert len(cache) == 0
    reply = _cached(cache, "other").invoke([HumanMessage("q")], config={"configurable": {"user_id": "1"}})
    assert reply.content == "other"


@pytest.mark.parametrize("scope", [0, 7])
def test_an_int_constructor_or_per_call_scope_is_refused(scope: int) -> None:
    with pytest.raises(TypeError, match=rf"must be a string or None, got int: {scope}"):
        ResponseCache(InMemoryServerCache(), scope=scope)
    model = _cached(InMemoryServerCache(), "x")
    with pytest.raises(TypeError, match=rf"must be a string or None, got int: {scope}"):
        model.invoke([HumanMessage("q")], config=ResponseCache.context({}, scope=scope))


def test_an_int_user_is_refused_by_the_intention_memory_and_its_tool() -> None:
    memory = IntentionMemory()
    with pytest.raises(TypeError, match="must be a string or None, got int: 1"):
        memory.store(1, "look up my bank balance", "balance: $9,999", tool="balance")
    tool = make_retrieve_memory_tool(memory)
    out = tool.invoke(
        {"type": "tool_call", "name": tool.name, "id": "c1", "args": {"intention": "look up my bank balance"}},
        config={"configurable": {"user_id": "1"}},
    )
    assert "9,999" not in str(out.content)
