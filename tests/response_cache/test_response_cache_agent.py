"""ResponseCache in create_agent, against both backends: hits, key inputs, tool loops, TTL, bust, key, scope."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel

from promptcache import (
    RESPONSE_CACHE_CONTEXT_KEY,
    InMemoryServerCache,
    Processor,
    ResponseCache,
    ResponseCacheKeyInputs,
    build_response_cache_key,
)
from promptcache.testing import ScriptedChatModel

Q = "What is the capital of France?"


def count_entries(cache: Any) -> int:
    """Entries in either backend (Redis: keys under the test's own prefix)."""
    if isinstance(cache, InMemoryServerCache):
        return len(cache)
    return len(list(cache.client.scan_iter(match=cache.prefix + "*")))


def make_agent(
    model: Any,
    cache: Any,
    *,
    tools: tuple = (),
    system: str = "Answer concisely.",
    outer: tuple = (),
    response_format: Any = None,
    **opts: Any,
) -> Any:
    return create_agent(
        model,
        tools=list(tools),
        system_prompt=system,
        response_format=response_format,
        middleware=[*outer, ResponseCache(cache, **opts)],
    )


def ask(agent: Any, text: str = Q, config: Any = None) -> AIMessage:
    return agent.invoke({"messages": [HumanMessage(text)]}, config=config)["messages"][-1]


def marker(message: Any) -> dict:
    return message.response_metadata.get("promptcache", {})


@tool
def lookup(city: str) -> str:
    """Look up facts about a city."""
    return f"facts about {city}"


# 1 -------------------------------------------------------------------------------------------------------------
def test_second_identical_call_is_a_hit(server_cache: Any) -> None:
    call = AIMessage("Paris.", tool_calls=[{"name": "lookup", "args": {"city": "Paris"}, "id": "c1"}])
    model = ScriptedChatModel(replies=[call])
    agent = create_agent(model, tools=[], system_prompt="s", middleware=[ResponseCache(server_cache)])
    first = ask(agent)
    second = ask(agent)
    assert model.calls == 1
    assert (second.content, second.tool_calls) == (first.content, first.tool_calls)
    assert second.tool_calls == [{"name": "lookup", "args": {"city": "Paris"}, "id": "c1", "type": "tool_call"}]
    assert marker(first) == {"cache": "miss", "key": marker(second)["key"]}
    assert marker(second)["cache"] == "hit"
    assert 0 <= marker(second)["age_s"] < 5
    assert first.usage_metadata == {"input_tokens": 7, "output_tokens": 1, "total_tokens": 8}
    assert marker(second)["usage"] == first.usage_metadata
    assert second.usage_metadata == {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    assert second.id != first.id
    assert second.response_metadata["finish_reason"] == "stop"
    assert count_entries(server_cache) == 1


async def test_second_identical_call_is_a_hit_async(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=["Paris."])
    agent = make_agent(model, server_cache)
    first = (await agent.ainvoke({"messages": [HumanMessage(Q)]}))["messages"][-1]
    second = (await agent.ainvoke({"messages": [HumanMessage(Q)]}))["messages"][-1]
    assert model.calls == 1
    assert second.content == first.content == "Paris."
    assert marker(second)["cache"] == "hit"
    assert marker(second)["usage"] == first.usage_metadata


# 2 -------------------------------------------------------------------------------------------------------------
def test_different_prompts_make_different_entries(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=["Paris.", "Berlin."])
    agent = make_agent(model, server_cache)
    assert ask(agent, "capital of France?").content == "Paris."
    assert ask(agent, "capital of Germany?").content == "Berlin."
    assert ask(agent, "capital of France?").content == "Paris."
    assert model.calls == 2
    assert count_entries(server_cache) == 2


class Answer(BaseModel):
    city: str


class OtherAnswer(BaseModel):
    city: str
    country: str


@tool("lookup")
def lookup_v2(city: str, year: int) -> str:
    """Look up facts about a city."""
    return city


class ForceToolChoice(Processor):
    """An outer processor setting the tool choice (as a user's middleware would)."""

    def process_request(self, request: ModelRequest) -> ModelRequest:
        return request.override(tool_choice="any")


def _variants() -> dict[str, dict[str, Any]]:
    return {
        "system prompt": {"system": "Answer at length."},
        "temperature": {"model": {"temperature": 0.7}},
        "model id": {"model": {"model_name": "scripted-large"}},
        "tool schema": {"tools": (lookup_v2,)},
        "tool choice": {"outer": (ForceToolChoice(),)},
        "response format": {"response_format": ToolStrategy(OtherAnswer)},
    }


@pytest.mark.parametrize("variant", list(_variants()))
def test_each_request_input_changes_the_key(server_cache: Any, variant: str) -> None:
    base: dict[str, Any] = {
        "system": "Answer concisely.",
        "tools": (lookup,),
        "outer": (),
        "response_format": ToolStrategy(Answer),
        "model": {},
    }
    changed = {**base, **_variants()[variant]}

    def run(spec: dict[str, Any]) -> tuple[int, dict]:
        schema = spec["response_format"].schema
        args = {"city": "Paris", "country": "France"} if schema is OtherAnswer else {"city": "Paris"}
        reply = AIMessage("", tool_calls=[{"name": schema.__name__, "args": args, "id": "s1"}])
        model = ScriptedChatModel(replies=[reply], **spec["model"])
        agent = make_agent(
            model,
            server_cache,
            tools=spec["tools"],
            system=spec["system"],
            outer=spec["outer"],
            response_format=spec["response_format"],
        )
        out = agent.invoke({"messages": [HumanMessage(Q)]})
        return model.calls, out

    calls, out = run(base)
    assert calls == 1 and out["structured_response"] == Answer(city="Paris")
    calls, out = run(base)
    assert calls == 0 and out["structured_response"] == Answer(city="Paris")  # hit: structured output restored
    assert marker(out["messages"][-2])["cache"] == "hit"
    assert isinstance(out["messages"][-1], ToolMessage)  # the structured-output tool message is replayed too
    calls, out = run(changed)
    assert calls == 1, f"{variant} should miss"
    assert marker(out["messages"][-2])["cache"] == "miss"
    assert count_entries(server_cache) == 2


def test_message_ids_and_run_metadata_do_not_change_the_key(server_cache: Any) -> None:
    def conversation(tag: str) -> list:
        return [
            HumanMessage("find Paris", id=f"h1-{tag}"),
            AIMessage(
                "",
                id=f"a1-{tag}",
                response_metadata={"run": tag},
                usage_metadata={"input_tokens": len(tag), "output_tokens": 1, "total_tokens": len(tag) + 1},
                tool_calls=[{"name": "lookup", "args": {"city": "Paris"}, "id": f"call-{tag}"}],
            ),
            ToolMessage("facts about Paris", tool_call_id=f"call-{tag}", id=f"t1-{tag}"),
            HumanMessage("and Lyon?", id=f"h2-{tag}"),
        ]

    model = ScriptedChatModel(replies=["Lyon is nice."])
    agent = make_agent(model, server_cache, tools=(lookup,))
    agent.invoke({"messages": conversation("first")})
    out = agent.invoke({"messages": conversation("second-run")})
    assert model.calls == 1
    assert marker(out["messages"][-1])["cache"] == "hit"
    changed = conversation("third")
    changed[2] = ToolMessage("other facts", tool_call_id="call-third")
    with pytest.raises(IndexError):  # a different tool result: a miss, so the script runs out
        agent.invoke({"messages": changed})


# 3 -------------------------------------------------------------------------------------------------------------
def test_each_tool_loop_step_is_its_own_entry(server_cache: Any) -> None:
    runs: list[int] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        runs.append(a + b)
        return a + b

    step0 = AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "call_1"}])
    model = ScriptedChatModel(replies=[step0, "It is 5."])
    agent = make_agent(model, server_cache, tools=(add,))
    first = agent.invoke({"messages": [HumanMessage("2+3?")]})["messages"]
    second = agent.invoke({"messages": [HumanMessage("2+3?")]})["messages"]
    assert model.calls == 2
    assert count_entries(server_cache) == 2
    assert runs == [5, 5]  # the cached step 0 asks for the tool, so the tool runs again
    assert [type(m).__name__ for m in second] == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert [marker(m).get("cache") for m in second] == [None, "hit", None, "hit"]
    assert (
        second[1].tool_calls
        == first[1].tool_calls
        == [{"name": "add", "args": {"a": 2, "b": 3}, "id": "call_1", "type": "tool_call"}]
    )
    assert second[3].content == "It is 5."


def test_step_number_reaches_key_function(server_cache: Any) -> None:
    seen: list[int] = []

    def key(inputs: ResponseCacheKeyInputs) -> str:
        seen.append(inputs.step_number)
        return build_response_cache_key(inputs)

    step0 = AIMessage("", tool_calls=[{"name": "lookup", "args": {"city": "Rome"}, "id": "x"}])
    agent = make_agent(ScriptedChatModel(replies=[step0, "done"]), server_cache, tools=(lookup,), key=key)
    agent.invoke({"messages": [HumanMessage("Rome?")]})
    assert seen == [0, 1]


# 4 -------------------------------------------------------------------------------------------------------------
def test_model_error_writes_nothing(server_cache: Any) -> None:
    agent = make_agent(ScriptedChatModel(error=RuntimeError("provider down")), server_cache)
    with pytest.raises(RuntimeError, match="provider down"):
        ask(agent)
    assert count_entries(server_cache) == 0


async def test_cancelled_call_writes_nothing(server_cache: Any) -> None:
    class Hanging(ScriptedChatModel):
        async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
            await asyncio.sleep(30)
            raise AssertionError("not reached")

    agent = make_agent(Hanging(replies=["never"]), server_cache)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(agent.ainvoke({"messages": [HumanMessage(Q)]}), timeout=0.2)
    assert count_entries(server_cache) == 0


def test_empty_reply_is_not_stored(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=["", ""])
    agent = make_agent(model, server_cache)
    ask(agent)
    ask(agent)
    assert model.calls == 2
    assert count_entries(server_cache) == 0


# 5 -------------------------------------------------------------------------------------------------------------
def test_ttl_reaches_backend_in_seconds(server_cache: Any) -> None:
    agent = make_agent(ScriptedChatModel(replies=["Paris."]), server_cache, ttl_s=999)
    key = marker(ask(agent))["key"]
    if isinstance(server_cache, InMemoryServerCache):
        assert 998.0 < server_cache.ttl(key) <= 999.0
    else:
        assert server_cache.client.ttl(server_cache.full_key(key)) == 999
        assert 998_000 < server_cache.client.pttl(server_cache.full_key(key)) <= 999_000


def test_entries_expire(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=["one", "two"])
    agent = make_agent(model, server_cache, ttl_s=0.15)
    assert ask(agent).content == "one"
    assert ask(agent).content == "one"
    time.sleep(0.3)
    assert ask(agent).content == "two"
    assert model.calls == 2


# 6 -------------------------------------------------------------------------------------------------------------
def test_bust_calls_model_and_overwrites(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=["old", "new"])
    agent = make_agent(model, server_cache)
    assert ask(agent).content == "old"
    busted = ask(agent, config=ResponseCache.context(bust=True))
    assert (busted.content, marker(busted)["cache"]) == ("new", "bust")
    after = ask(agent)
    assert (after.content, marker(after)["cache"]) == ("new", "hit")
    assert model.calls == 2


def test_apply_context_merges_and_overwrites() -> None:
    config: dict = {"configurable": {"user_id": "u-123", "thread_id": "t"}, "tags": ["x"]}
    assert ResponseCache.apply_context(config, bust=True, key="k1") is config
    assert ResponseCache.apply_context(config, bust=False) is config
    assert config == {
        "configurable": {
            "user_id": "u-123",
            "thread_id": "t",
            RESPONSE_CACHE_CONTEXT_KEY: {"bust": False, "key": "k1"},
        },
        "tags": ["x"],
    }
    assert ResponseCache.context(key="custom", bust=True) == {
        "configurable": {RESPONSE_CACHE_CONTEXT_KEY: {"key": "custom", "bust": True}}
    }


# 7 -------------------------------------------------------------------------------------------------------------
def test_per_call_key_shares_within_scope_only(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=["FAQ answer", "u2 answer"])
    agent = make_agent(model, server_cache)
    cfg = lambda user: ResponseCache.apply_context({"configurable": {"user_id": user}}, key="faq")  # noqa: E731
    assert ask(agent, "how do I reset?", cfg("u1")).content == "FAQ answer"
    shared = ask(agent, "password reset please", cfg("u1"))
    assert (shared.content, marker(shared)["cache"]) == ("FAQ answer", "hit")
    assert ask(agent, "how do I reset?", cfg("u2")).content == "u2 answer"
    assert model.calls == 2
    assert marker(shared)["key"].startswith("response:promptcache-response-cache:")
    u1 = hashlib.sha256(b"u1").hexdigest()
    assert marker(shared)["key"] == f"response:promptcache-response-cache:{u1[:8]}:key:faq@{u1[8:40]}"


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_key_function_receives_inputs(server_cache: Any, kind: str) -> None:
    got: list[ResponseCacheKeyInputs] = []

    def sync_key(inputs: ResponseCacheKeyInputs) -> str:
        got.append(inputs)
        return "fixed"

    async def async_key(inputs: ResponseCacheKeyInputs) -> str:
        got.append(inputs)
        return "fixed"

    model = ScriptedChatModel(replies=["a"])
    agent = make_agent(model, server_cache, key=sync_key if kind == "sync" else async_key, agent_id="faq-bot")
    ask(agent, "q1", {"configurable": {"user_id": "u1"}})
    hit = ask(agent, "q2", {"configurable": {"user_id": "u1"}})
    assert marker(hit)["cache"] == "hit" and model.calls == 1
    first = got[0]
    assert (first.agent_id, first.scope, first.step_number) == ("faq-bot", "u1", 0)
    assert first.model["model_id"] == "scripted" and first.model["provider"] == "promptcache-scripted"
    assert [m.content for m in first.prompt] == ["Answer concisely.", "q1"]


async def test_async_key_function_in_async_agent(server_cache: Any) -> None:
    async def key(inputs: ResponseCacheKeyInputs) -> str:
        await asyncio.sleep(0)
        return "same"

    model = ScriptedChatModel(replies=["a"])
    agent = make_agent(model, server_cache, key=key)
    await agent.ainvoke({"messages": [HumanMessage("q1")]})
    out = await agent.ainvoke({"messages": [HumanMessage("q2")]})
    assert marker(out["messages"][-1])["cache"] == "hit"


def test_raising_key_function_falls_back_to_default(server_cache: Any, caplog: Any) -> None:
    model = ScriptedChatModel(replies=["Paris."])
    ask(make_agent(model, server_cache))  # written under the default key

    def broken(inputs: ResponseCacheKeyInputs) -> str:
        raise KeyError("no tenant")

    with caplog.at_level(logging.WARNING, logger="promptcache"):
        hit = ask(make_agent(model, server_cache, key=broken))
    assert (marker(hit)["cache"], model.calls) == ("hit", 1)
    assert any("key function failed" in r.getMessage() and "no tenant" in r.getMessage() for r in caplog.records)


# 8 -------------------------------------------------------------------------------------------------------------
def test_user_id_is_the_default_scope(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=["for u1", "for u2"])
    agent = make_agent(model, server_cache)
    assert ask(agent, config={"configurable": {"user_id": "u1"}}).content == "for u1"
    assert ask(agent, config={"configurable": {"user_id": "u2"}}).content == "for u2"
    assert ask(agent, config={"configurable": {"user_id": "u1"}}).content == "for u1"
    assert model.calls == 2 and count_entries(server_cache) == 2


def test_per_call_scope_overrides_user(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=["team answer"])
    agent = make_agent(model, server_cache)
    team = lambda user: ResponseCache.apply_context({"configurable": {"user_id": user}}, scope="team-7")  # noqa: E731
    ask(agent, config=team("u1"))
    assert marker(ask(agent, config=team("u2")))["cache"] == "hit"
    assert model.calls == 1


def test_constructor_scope_none_shares_across_users(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=["shared"])
    agent = make_agent(model, server_cache, scope=None)
    ask(agent, config={"configurable": {"user_id": "u1"}})
    hit = ask(agent, config={"configurable": {"user_id": "u2"}})
    assert (marker(hit)["cache"], model.calls) == ("hit", 1)
    assert marker(hit)["key"].count(":") == 2  # response:{agent}:{hash}: no scope segment


def test_langgraph_auth_user_id_when_user_id_absent(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=["for a1", "for a2"])
    agent = make_agent(model, server_cache)
    ask(agent, config={"configurable": {"langgraph_auth_user_id": "a1"}})
    assert marker(ask(agent, config={"configurable": {"user_id": "a1"}}))["cache"] == "hit"
    assert ask(agent, config={"configurable": {"langgraph_auth_user_id": "a2"}}).content == "for a2"
    assert model.calls == 2
