"""A cached step that calls tools the request no longer offers is a miss: with a fixed per-call key
(``context(key="faq")``) the entry outlives a change of the agent's tools, and replaying it would make the agent
call a tool it does not have."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from promptcache import InMemoryServerCache, ResponseCache
from promptcache.testing import ScriptedChatModel

QUESTION = {"messages": [("user", "How many open tickets?")]}
CALL = AIMessage(content="", tool_calls=[{"name": "count_tickets", "args": {"state": "open"}, "id": "c1"}])


@tool
def count_tickets(state: str) -> int:
    """Count the tickets in a state."""
    return 7


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return "sun"


def test_cached_tool_call_for_a_tool_the_agent_no_longer_has_is_a_miss():
    cache = InMemoryServerCache()
    first = ScriptedChatModel(replies=[CALL, "7 open tickets."])
    agent = create_agent(first, tools=[count_tickets], middleware=[ResponseCache(cache, ttl_s=600)])
    out = agent.invoke(QUESTION, config=ResponseCache.context(key="faq"))
    assert out["messages"][-1].content == "7 open tickets." and first.calls == 2

    later = ScriptedChatModel(replies=["I cannot count tickets any more."])
    agent = create_agent(later, tools=[weather], middleware=[ResponseCache(cache, ttl_s=600)])
    out = agent.invoke(QUESTION, config=ResponseCache.context(key="faq"))
    last = out["messages"][-1]
    assert (last.content, last.tool_calls, later.calls) == ("I cannot count tickets any more.", [], 1)
    assert last.response_metadata["promptcache"]["cache"] == "miss"


def test_cached_tool_call_for_a_tool_still_offered_is_a_hit():
    cache = InMemoryServerCache()
    first = ScriptedChatModel(replies=[CALL, "7 open tickets."])
    create_agent(first, tools=[count_tickets], middleware=[ResponseCache(cache, ttl_s=600)]).invoke(
        QUESTION, config=ResponseCache.context(key="faq")
    )
    again = ScriptedChatModel(replies=["unused"])
    agent = create_agent(again, tools=[weather, count_tickets], middleware=[ResponseCache(cache, ttl_s=600)])
    out = agent.invoke(QUESTION, config=ResponseCache.context(key="faq"))
    assert (out["messages"][-1].content, again.calls) == ("7 open tickets.", 0)  # both steps replayed


async def test_async_miss_alike():
    cache = InMemoryServerCache()
    first = ScriptedChatModel(replies=[CALL, "7 open tickets."])
    agent = create_agent(first, tools=[count_tickets], middleware=[ResponseCache(cache, ttl_s=600)])
    await agent.ainvoke(QUESTION, config=ResponseCache.context(key="faq"))
    later = ScriptedChatModel(replies=["No tools for that."])
    agent = create_agent(later, tools=[], middleware=[ResponseCache(cache, ttl_s=600)])
    out = await agent.ainvoke(QUESTION, config=ResponseCache.context(key="faq"))
    assert (out["messages"][-1].content, later.calls) == ("No tools for that.", 1)


def test_only_custom_keys_get_the_tool_check():
    from promptcache.response_cache._keys import custom_key, key_namespace
    from promptcache.response_cache._offered_tools import is_custom_key

    digest = "0123456789abcdef0123456789abcdef"
    for agent in ("bot", "key"):
        for scope in (None, "alice"):
            assert is_custom_key(custom_key(agent, scope, "faq"), agent) is True
            assert is_custom_key(custom_key(agent, scope, "faq", step=2), agent) is True
            assert is_custom_key(f"{key_namespace(agent, scope)}:{digest}", agent) is False
    assert is_custom_key(custom_key("bot", None, "faq"), "other") is False
