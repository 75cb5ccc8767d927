"""ResponseCache around ChatBedrockConverse (with and without BedrockCachePoints): hits, streams, usage."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from support.bedrock_rules import Weather, joined

from promptcache import InMemoryServerCache, ResponseCache, ServerCache, with_processors
from promptcache.testing import ScriptedChatModel


def test_with_structured_output_of_a_pydantic_model_through_the_cache():
    """``with_processors(model, [ResponseCache]).with_structured_output(PydanticModel)`` crashes while building the
    key: LangChain binds ``ls_structured_output_format={"schema": <class>}``, which reaches the key's settings and
    ``canonical_json`` cannot encode a class (TypeError: Type is not JSON serializable: ModelMetaclass)."""
    call = AIMessage("", tool_calls=[{"name": "Weather", "args": {"city": "Paris", "temp": 21}, "id": "w1"}])
    model = ScriptedChatModel(replies=[call, call])
    structured = with_processors(model, [ResponseCache(InMemoryServerCache())]).with_structured_output(Weather)
    assert structured.invoke("weather in Paris?") == Weather(city="Paris", temp=21)
    assert structured.invoke("weather in Paris?") == Weather(city="Paris", temp=21)
    assert model.calls == 1


def test_fixed_key_in_a_tool_loop_gives_each_step_its_own_entry():
    """A per-call ``key`` (README: ``apply_context(config, key="faq")``) ignores the step number: step 1 of a tool
    loop hits step 0's entry, asks for the tool again, and so on until LangGraph's recursion limit (the tool ran
    6 times here). docs/architecture.md: each step of a tool loop has its own entry."""
    runs: list[int] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        runs.append(a + b)
        return a + b

    step0 = AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "c1"}])
    model = ScriptedChatModel(replies=[step0, "It is 5."])
    agent = create_agent(model, tools=[add], middleware=[ResponseCache(InMemoryServerCache())])
    out = agent.invoke(
        {"messages": [HumanMessage("2+3?")]}, config={**ResponseCache.context(key="faq"), "recursion_limit": 12}
    )
    assert out["messages"][-1].content == "It is 5."
    assert runs == [5] and model.calls == 2


def test_stream_hit_keeps_invalid_tool_calls_and_name():
    """A hit read with ``invoke`` keeps the reply's ``invalid_tool_calls`` and ``name``; the same hit read with
    ``stream`` loses both (``ai_message_to_chunk`` drops them)."""
    original = AIMessage(
        content="text",
        name="bot",
        tool_calls=[{"name": "g", "args": {"a": 1}, "id": "y"}],
        invalid_tool_calls=[{"name": "f", "args": "{bad", "id": "x", "error": "bad json", "type": "invalid_tool_call"}],
    )
    wrapped = with_processors(ScriptedChatModel(replies=[original]), [ResponseCache(InMemoryServerCache())])
    wrapped.invoke("hi")
    invoked = wrapped.invoke("hi")
    streamed = joined(list(wrapped.stream("hi")))
    assert streamed.response_metadata["promptcache"]["cache"] == invoked.response_metadata["promptcache"]["cache"]
    assert streamed.invalid_tool_calls == invoked.invalid_tool_calls == original.invalid_tool_calls
    assert streamed.name == invoked.name == "bot"


def test_per_call_key_with_a_lone_surrogate_is_rejected_like_a_scope():
    """``context(scope="\\ud800")`` is refused (no UTF-8 store can hold it); ``context(key="a\\ud800")`` is accepted
    and then breaks the call (a key over 200 characters is hashed: UnicodeEncodeError) or, on Redis, never
    caches."""
    with pytest.raises(ValueError, match="key"):
        ResponseCache.context(key="a\ud800")
    wrapped = with_processors(ScriptedChatModel(replies=["a"]), [ResponseCache(InMemoryServerCache())])
    with pytest.raises(ValueError, match="key"):
        wrapped.invoke("hi", config={"configurable": {"promptcache.response_cache": {"key": "\ud800" * 300}}})


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_key_function_returning_an_unencodable_string_falls_back(mode, caplog):
    """A key function that raises or returns a non-string falls back to the default key; one returning a long
    string with a lone surrogate raises UnicodeEncodeError into the user's call instead."""
    model = ScriptedChatModel(replies=["a", "b"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache(), key=lambda inputs: "\ud800" * 300)])
    with caplog.at_level(logging.WARNING, logger="promptcache"):
        first = wrapped.invoke("hi") if mode == "sync" else asyncio.run(wrapped.ainvoke("hi"))
    assert first.content == "a" and ":key:" not in first.response_metadata["promptcache"]["key"]
    assert any(r.name.startswith("promptcache") for r in caplog.records)


@pytest.mark.parametrize(
    "stored",
    [
        b'{"v":1,"created_at":1,"messages":[{"type":"ai","data":{"content":""}}]}',
        b'{"v":1,"created_at":1,"messages":[{"type":"ai","data":{"content":[],"tool_calls":[]}}]}',
    ],
    ids=["empty-string", "empty-list"],
)
def test_entry_holding_an_empty_reply_is_a_miss(stored):
    """An empty reply is never written; an entry that holds one (foreign or corrupt) is replayed as an empty hit,
    so the user gets no answer and the model is never asked."""
    cache = InMemoryServerCache()
    model = ScriptedChatModel(replies=["first", "fresh"])
    wrapped = with_processors(model, [ResponseCache(cache)])
    key = wrapped.invoke("hi").response_metadata["promptcache"]["key"]
    cache.set(key, stored, 60)
    again = wrapped.invoke("hi")
    assert (again.content, model.calls) == ("fresh", 2)


class _Returns(ServerCache):
    """A custom backend whose ``get`` returns whatever it was given (not bytes), and writes nothing."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def get(self, key):
        return self.value

    def set(self, key, value, ttl_s=None):
        pass

    def delete(self, key):
        pass

    def clear(self, prefix=""):
        return 0


@pytest.mark.parametrize(
    "value", ["not json", 5, ["x"], {"v": 1}, object()], ids=["str", "int", "list", "dict", "object"]
)
def test_backend_returning_non_bytes_is_a_logged_miss(value, caplog):  # passes
    model = ScriptedChatModel(replies=["fresh"])
    wrapped = with_processors(model, [ResponseCache(_Returns(value))])
    with caplog.at_level(logging.WARNING, logger="promptcache"):
        out = wrapped.invoke("hi")
    assert (out.content, out.response_metadata["promptcache"]["cache"], model.calls) == ("fresh", "miss", 1)
    assert len([r for r in caplog.records if r.name.startswith("promptcache")]) == 1


@pytest.mark.parametrize("key", ["a\x00b", "🙂 ключ", "x" * 500 + "\x00"], ids=["nul", "unicode", "long-nul"])
def test_per_call_keys_with_nul_and_unicode_hit_on_redis(key, redis_cache):  # passes
    model = ScriptedChatModel(replies=["shared", "other tenant"])
    wrapped = with_processors(model, [ResponseCache(redis_cache)])
    config = lambda user: ResponseCache.apply_context({"configurable": {"user_id": user}}, key=key)  # noqa: E731
    assert wrapped.invoke("question one", config=config("u1")).content == "shared"
    hit = wrapped.invoke("question two", config=config("u1"))
    assert (hit.content, hit.response_metadata["promptcache"]["cache"]) == ("shared", "hit")
    assert wrapped.invoke("question one", config=config("u2")).content == "other tenant"
    assert model.calls == 2
