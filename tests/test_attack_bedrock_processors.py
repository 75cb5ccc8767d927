"""Adversarial tests: Bedrock cache points (strategies, CachePointChatBedrockConverse, BedrockCachePoints) and
ResponseCache / with_processors, fed bad input and unusual-but-valid input.

Each test asserts the CORRECT behaviour (docs/architecture.md, README):
- bad input: a clear exception naming the bad value, raised before anything is sent or written;
- a failing or corrupt cache: a miss, logged, never a broken call;
- every Converse request valid: at most 4 cachePoint blocks, never first in a message, never after a reasoning
  block, TTLs non-increasing along tools -> system -> messages, Nova: none in tools and none after a toolResult or
  an image; placement only adds cachePoint blocks, it never changes the rest of the request.

botocore's Stubber validates each request's shape against the Converse API model; the semantic rules above are
not part of that model, so ``violations()`` checks them on the captured request. Tests marked ``# passes`` cover
what other test files do not and pass today; every other test documents a finding and fails until it is fixed.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import logging
import os
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from langchain.agents import create_agent
from langchain_aws import ChatBedrockConverse
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel, Field
from test_bedrock import add_stream_response

from promptcache import InMemoryServerCache, ResponseCache, ServerCache, with_processors
from promptcache.cache_points import (
    default_count_tokens,
    get_model_info,
    is_cache_point,
    place_cache_points,
)
from promptcache.integrations.bedrock import BedrockCachePoints, CachePointChatBedrockConverse
from promptcache.testing import ScriptedChatModel

CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"
SONNET45 = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"  # allows the 1-hour TTL
NOVA = "us.amazon.nova-pro-v1:0"
CP = {"cachePoint": {"type": "default"}}
HOUR = {"cachePoint": {"type": "default", "ttl": "1h"}}
PNG = b"\x89PNG\r\n\x1a\n" + b"0" * 32


# ---------------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------------
def client_stub_sent() -> tuple[Any, Stubber, list[dict[str, Any]]]:
    """A real bedrock-runtime client, its Stubber, and the list every request's parameters are copied into."""
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    sent: list[dict[str, Any]] = []
    client.meta.events.register(
        "provide-client-params.bedrock-runtime.*", lambda params, **_: sent.append(copy.deepcopy(params))
    )
    return client, Stubber(client), sent


def reply(content: Any = "ok", stop: str = "end_turn", read: int = 0, write: int = 0) -> dict[str, Any]:
    if isinstance(content, str):
        content = [{"text": content}]
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {
            "inputTokens": 1,
            "outputTokens": 1,
            "totalTokens": 2 + read + write,
            "cacheReadInputTokens": read,
            "cacheWriteInputTokens": write,
        },
        "metrics": {"latencyMs": 1},
    }


def cp_model(client: Any, model_id: str = CLAUDE, min_tokens: int = 20, **kw: Any) -> CachePointChatBedrockConverse:
    info = kw.pop("cache_model_info", None) or get_model_info(model_id, min_tokens_per_cache_point=min_tokens)
    return CachePointChatBedrockConverse(
        model=model_id, client=client, region_name="us-east-1", cache_model_info=info, **kw
    )


def all_points(params: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every cachePoint of a request in Bedrock's prefix order: tools, system, messages."""
    out = [("tools", b) for b in (params.get("toolConfig") or {}).get("tools") or [] if is_cache_point(b)]
    out += [("system", b) for b in params.get("system") or [] if is_cache_point(b)]
    for i, message in enumerate(params["messages"]):
        out += [(f"messages[{i}]", b) for b in message["content"] if is_cache_point(b)]
    return out


def violations(params: dict[str, Any], nova: bool = False) -> list[str]:
    """The Bedrock cache-point rules the Stubber does not check (each one a ValidationException)."""
    problems = []
    if nova and any(where == "tools" for where, _ in all_points(params)):
        problems.append("Nova: a point in tools")
    for i, message in enumerate(params["messages"]):
        content = message["content"]
        for j, block in enumerate(content):
            if not is_cache_point(block):
                continue
            before = content[j - 1] if j else None
            if before is None:
                problems.append(f"messages[{i}]: point is the first block")
            elif "reasoningContent" in before:
                problems.append(f"messages[{i}]: point right after a reasoning block")
            elif nova and ("toolResult" in before or "image" in before):
                problems.append(f"messages[{i}]: Nova point right after {next(iter(before))}")
    points = all_points(params)
    if len(points) > 4:
        problems.append(f"{len(points)} cache points (max 4)")
    cap = 1
    for where, block in points:
        rank = {"5m": 0, "1h": 1}[block["cachePoint"].get("ttl", "5m")]
        if rank > cap:
            problems.append(f"TTL increases at {where}")
        cap = min(cap, rank)
    return problems


def strip_points(params: dict[str, Any]) -> dict[str, Any]:
    params = copy.deepcopy(params)
    params["system"] = [b for b in params.get("system") or [] if not is_cache_point(b)]
    for message in params["messages"]:
        message["content"] = [b for b in message["content"] if not is_cache_point(b)]
    if "toolConfig" in params:
        params["toolConfig"]["tools"] = [t for t in params["toolConfig"]["tools"] if not is_cache_point(t)]
    return params


def human(text: str, *extra: dict[str, Any]) -> HumanMessage:
    return HumanMessage(content=[{"type": "text", "text": text}, *extra])


def joined(chunks: list[Any]) -> Any:
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


@tool
def look(q: str) -> str:
    """Look something up in the knowledge base and return the matching passage."""
    return "found"


# =================================================================================================================
# Bedrock: the request sent must be valid
# =================================================================================================================
def test_default_ttl_points_never_precede_a_callers_one_hour_point():
    """The caller ends the conversation with their own 1h point; the points we add before it (system, spare) use
    the default 5m TTL, so the TTL increases along the request: Bedrock rejects it."""
    client, stub, sent = client_stub_sent()
    model = cp_model(client, SONNET45, token_counter=lambda m: 50)
    stub.add_response("converse", reply(), None)
    with stub:
        model.invoke([SystemMessage("sys " * 30), HumanMessage("a"), AIMessage("b"), human("c", HOUR)])
    assert violations(sent[-1]) == []


@pytest.mark.parametrize("layout", ["five-manual-points", "manual-5m-then-1h"])
def test_an_invalid_manual_layout_is_refused_before_sending_or_repaired(layout):
    """The caller's own points already break a rule: either a clear ValueError before anything is sent, or a valid
    request (never the invalid one passed on to Bedrock)."""
    client, stub, sent = client_stub_sent()
    if layout == "five-manual-points":
        model = cp_model(client, CLAUDE, token_counter=lambda m: 50)
        messages = [
            SystemMessage(content=[{"type": "text", "text": "s"}, CP]),
            human("a", CP),
            AIMessage("b"),
            human("c", CP),
            AIMessage("d"),
            human("e", CP),
            AIMessage("f"),
            human("g", CP),
        ]
    else:
        model = cp_model(client, SONNET45, token_counter=lambda m: 50)
        messages = [human("a", CP), AIMessage("b"), human("c", HOUR)]
    stub.add_response("converse", reply(), None)
    try:
        with stub:
            model.invoke(messages)
    except ValueError as exc:
        assert "cache" in str(exc).lower() and not sent
    else:
        assert violations(sent[-1]) == []


@pytest.mark.parametrize(
    "model_id",
    [
        "us.anthropic.claude-3-haiku-20240307-v1:0",
        "anthropic.claude-3-5-sonnet-20240620-v1:0",
        "anthropic.claude-3-opus-20240229-v1:0",
    ],
)
def test_claude_models_without_prompt_caching_get_no_points(model_id):
    """Claude 3 Haiku/Opus and Claude 3.5 Sonnet v1 are not in Bedrock's prompt-caching table; Bedrock refuses a
    cachePoint on them ("You invoked an unsupported model or your request did not allow prompt caching"). They
    are treated as an unknown future Claude (caching on), so every call would fail."""
    assert get_model_info(model_id).supports_prompt_cache is False
    client, stub, sent = client_stub_sent()
    model = CachePointChatBedrockConverse(
        model=model_id, client=client, region_name="us-east-1", token_counter=lambda m: 10_000
    )
    stub.add_response("converse", reply(), None)
    with stub:
        model.invoke([SystemMessage("sys"), HumanMessage("hi")])
    assert all_points(sent[-1]) == []


def test_processor_follows_a_base_model_changed_after_the_first_call():
    """BedrockCachePoints keeps a cache-point twin per model object, built from the model's settings on first use;
    a setting changed afterwards (temperature 0.1 -> 0.9) never reaches Bedrock: the processor changes the request
    beyond adding cache points."""
    client, stub, sent = client_stub_sent()
    base = ChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1", temperature=0.1)
    wrapped = with_processors(base, [BedrockCachePoints(token_counter=lambda m: 5)])
    stub.add_response("converse", reply(), None)
    stub.add_response("converse", reply(), None)
    with stub:
        wrapped.invoke("hi")
        assert sent[-1]["inferenceConfig"] == {"temperature": 0.1}
        base.temperature = 0.9
        wrapped.invoke("hi")
    assert sent[-1]["inferenceConfig"] == {"temperature": 0.9}


def test_processor_keeps_a_bounded_number_of_twins(monkeypatch):
    """One twin per base model object, the last ``_MAX_WRAPPED`` (256) used: an app that builds a model per request
    does not keep every model (and its boto3 clients) alive. (Bound lowered to 8 here, for speed.)"""
    import gc
    import weakref

    from promptcache.integrations import bedrock as pcb

    monkeypatch.setattr(pcb, "_MAX_WRAPPED", 8)
    client, _, _ = client_stub_sent()
    processor = BedrockCachePoints(token_counter=lambda m: 5)
    first = ChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1")
    twin = processor.wrap(first)
    assert processor.wrap(first) is twin  # unchanged model: the same twin
    gone = weakref.ref(first)
    del first
    for _ in range(pcb._MAX_WRAPPED):
        processor.wrap(ChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1"))
    del twin
    gc.collect()
    assert len(processor._wrapped) == pcb._MAX_WRAPPED and gone() is None


@pytest.mark.parametrize("cache_control", ["1h", True, ["ttl", "1h"]])
def test_per_call_cache_control_that_is_not_a_dict_is_named(cache_control):
    """``cache_control`` (langchain-aws' per-call option, read by the wrapper for its TTL) given as a string: an
    AttributeError ("'str' object has no attribute 'get'") that names neither the option nor the value."""
    client, stub, sent = client_stub_sent()
    model = cp_model(client, SONNET45, token_counter=lambda m: 50)
    with pytest.raises((TypeError, ValueError), match="cache_control"):
        model.invoke([HumanMessage("hi")], cache_control=cache_control)
    assert sent == []


# =================================================================================================================
# Bedrock: strategies and token counting
# =================================================================================================================
_SPEC = {"toolSpec": {"name": "f", "description": " ".join(["word"] * 40), "inputSchema": {"json": {}}}}


@pytest.mark.parametrize(
    "bad, tools",
    [(-1, [_SPEC]), (True, None), (None, None), ("7", None), (2.5, [_SPEC])],
    ids=["negative-with-tools", "bool", "None", "str", "float-with-tools"],
)
def test_counter_result_for_a_system_with_a_manual_point_is_checked(bad, tools):
    """``count_tokens`` must return an int >= 0 (CacheStrategy names ``count_tokens(system_prompt)``). When the
    system holds the caller's own point its count is added to ``prefix_tokens`` unchecked: -1 (offset by the tool
    tokens) and True are taken silently, None/"7" give a bare ``TypeError: unsupported operand``, and 2.5 is
    reported as ``prefix_tokens ... got 63.5``, a value the caller never returned."""
    info = get_model_info(CLAUDE, min_tokens_per_cache_point=20)

    def counter(message):
        return bad if message["role"] == "system" else 30

    with pytest.raises(ValueError, match=r"count_tokens\(system_prompt\).*" + repr(bad).replace(".", r"\.")):
        place_cache_points(
            info, [{"text": "sys"}, CP], [{"role": "user", "content": [{"text": "hi"}]}], tools, count_tokens=counter
        )


@pytest.mark.parametrize(
    "system, tools",
    [("You are a helpful assistant. " * 10, None), (None, None), ([], "get_weather")],
    ids=["system-str", "system-None", "tools-str"],
)
def test_place_cache_points_with_a_string_or_none_system(system, tools):
    """``place_cache_points(system=<str>)`` splits the prompt into one "block" per character (content changed, and
    not a Converse request); ``system=None`` fails with "'NoneType' object is not iterable"; ``tools=<str>``
    becomes one tool per character. Correct: a clear error naming the argument, or the string taken as one text
    block (``None`` as no system)."""
    info = get_model_info(CLAUDE, min_tokens_per_cache_point=5)
    messages = [{"role": "user", "content": [{"text": "hello"}]}]
    try:
        plan = place_cache_points(info, system, messages, tools, count_tokens=lambda m: 10)
    except (TypeError, ValueError) as exc:
        assert ("system" if tools is None else "tools") in str(exc)
    else:
        if isinstance(system, str):
            assert [b for b in plan.system if not is_cache_point(b)] == [{"text": system}]
        else:
            assert [b for b in plan.system if not is_cache_point(b)] == []
        assert all(isinstance(t, dict) for t in plan.tools or [])


def test_guard_content_image_counts_like_an_image():
    """A 1 MB image inside ``guardContent`` is counted from the repr of its bytes: ~1.6 million tokens (an image
    is 1,600), half a second of tiktoken per call, and a multi-megabyte string kept in the counter's memo."""
    data = os.urandom(1_000_000)
    message = {"role": "user", "content": [{"guardContent": {"image": {"format": "png", "source": {"bytes": data}}}}]}
    tokens = default_count_tokens(message)
    assert tokens <= 10_000  # counted as an image, not from the bytes' repr (speed: bench/, not asserted here)


# =================================================================================================================
# Bedrock: unusual but valid input (# passes)
# =================================================================================================================
def _every_block_kind() -> list[Any]:
    img = {
        "type": "image",
        "source": {"type": "base64", "mediaType": "image/png", "data": base64.b64encode(PNG).decode()},
    }
    reasoning = {"type": "reasoning_content", "reasoning_content": {"text": "thinking it over", "signature": "sig"}}
    cited = {
        "type": "text",
        "text": "cited",
        "citations": [
            {
                "sourceContent": [{"text": "src"}],
                "title": "t",
                "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 3}},
            }
        ],
    }
    calls = [{"name": "look", "args": {"q": "a"}, "id": "t1"}]
    return [
        SystemMessage("You are a careful research assistant. " * 5),
        HumanMessage(
            content=["see", img, {"document": {"format": "txt", "name": "notes", "source": {"bytes": b"doc"}}}]
        ),
        AIMessage(content=[reasoning, {"type": "text", "text": "let me look"}], tool_calls=calls),
        ToolMessage(content=[{"type": "json", "json": {"a": 1}}, img], tool_call_id="t1"),
        AIMessage(content=[cited], tool_calls=[{"name": "look", "args": {"q": "b"}, "id": "t2"}]),
        ToolMessage("boom", tool_call_id="t2", status="error"),
        HumanMessage(content=[{"type": "guard_content", "text": "guarded"}, {"type": "text", "text": "ok"}]),
        HumanMessage(content=[{"video": {"format": "mp4", "source": {"bytes": b"\x00\x00"}}}, "two humans in a row"]),
        AIMessage(content=[reasoning]),
        HumanMessage("last"),
    ]


@pytest.mark.parametrize("model_id", [CLAUDE, NOVA])
@pytest.mark.parametrize("strategy", ["anchored-tail", "multi-point"])
def test_every_block_kind_only_gains_valid_points(model_id, strategy):  # passes
    """Text, image, document, video, reasoning, citations, guard content, json/image/error tool results, two user
    turns in a row: the request equals langchain-aws' own one apart from the added points, and is valid."""
    client, stub, sent = client_stub_sent()
    plain = ChatBedrockConverse(model=model_id, client=client, region_name="us-east-1").bind_tools([look])
    ours = cp_model(client, model_id, token_counter=lambda m: 30, strategy=strategy).bind_tools([look])
    stub.add_response("converse", reply(), None)
    stub.add_response("converse", reply(), None)
    with stub:
        plain.invoke(_every_block_kind())
        ours.invoke(_every_block_kind())
    assert strip_points(sent[1]) == strip_points(sent[0])
    assert all_points(sent[1]) and violations(sent[1], nova=model_id == NOVA) == []


def _long_history(n: int) -> list[Any]:
    messages: list[Any] = [SystemMessage("system " * 1500)]
    i = 0
    while len(messages) < n:
        calls = [{"name": "look", "args": {"q": str(i)}, "id": f"t{i}{s}"} for s in "ab"]
        messages += [
            HumanMessage(f"question {i} " + "w " * 50),
            AIMessage("", tool_calls=calls),
            ToolMessage("result " * 30, tool_call_id=f"t{i}a"),
            ToolMessage("result " * 30, tool_call_id=f"t{i}b"),
            AIMessage(f"answer {i} " + "w " * 40),
        ]
        i += 1
    return messages


@pytest.mark.parametrize("model_id", [CLAUDE, NOVA])
@pytest.mark.parametrize("strategy", ["anchored-tail", "multi-point"])
def test_thousand_message_conversation_stays_valid(model_id, strategy):  # passes
    """1,000 LangChain messages (parallel tool calls, default tiktoken counter, real model limits), three turns on
    one thread: each request valid (placement speed is measured in bench/cache_points.py, not asserted)."""
    client, stub, sent = client_stub_sent()
    model = CachePointChatBedrockConverse(
        model=model_id, client=client, region_name="us-east-1", strategy=strategy
    ).bind_tools([look])
    history = _long_history(1000)
    for turn in range(3):
        history.append(HumanMessage(f"follow-up {turn}"))
        stub.add_response("converse", reply(f"r{turn}"), None)
        with stub:
            history.append(model.invoke(history, config={"configurable": {"thread_id": f"big-{model_id}-{strategy}"}}))
        assert all_points(sent[-1]) and violations(sent[-1], nova=model_id == NOVA) == []


def test_processor_and_response_cache_stream_then_hit():  # passes
    """with_processors(ChatBedrockConverse, [ResponseCache, BedrockCachePoints]): the streamed miss carries the
    points and Converse's cache usage; the next stream and astream are hits (no Bedrock call)."""
    client, stub, sent = client_stub_sent()
    base = ChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1")
    wrapped = with_processors(
        base, [ResponseCache(InMemoryServerCache()), BedrockCachePoints(token_counter=lambda m: 2000)]
    )
    messages = [SystemMessage("sys"), HumanMessage("hi")]
    config = {"configurable": {"thread_id": "stream-hit"}}
    add_stream_response(stub, "hello there", None, read=5, write=7)
    with stub:
        miss = joined(list(wrapped.stream(messages, config=config)))
    assert miss.usage_metadata["input_token_details"] == {"cache_read": 5, "cache_creation": 7}
    assert [w for w, _ in all_points(sent[-1])] == ["system", "messages[0]"]

    async def collect():
        return joined([c async for c in wrapped.astream(messages, config=config)])

    for hit in (joined(list(wrapped.stream(messages, config=config))), asyncio.run(collect())):
        assert hit.response_metadata["promptcache"]["cache"] == "hit"
        assert hit.response_metadata["promptcache"]["usage"]["input_token_details"] == {
            "cache_read": 5,
            "cache_creation": 7,
        }
    assert len(sent) == 1


class Weather(BaseModel):
    """Weather report for one city, with the temperature in whole degrees Celsius."""

    city: str = Field(description="the name of the city the report is for " * 5)
    temp: int


def test_bedrock_structured_output_twice_keeps_one_tools_point():  # passes
    """with_structured_output on the cache-point model: the bound tool list is reused, never grows points."""
    client, stub, sent = client_stub_sent()
    structured = cp_model(client, CLAUDE, token_counter=lambda m: 30).with_structured_output(Weather)
    use = [{"toolUse": {"toolUseId": "a", "name": "Weather", "input": {"city": "Paris", "temp": 21}}}]
    for _ in range(2):
        stub.add_response("converse", reply(use, stop="tool_use"), None)
        with stub:
            assert structured.invoke([HumanMessage("weather?")]) == Weather(city="Paris", temp=21)
        assert [next(iter(t)) for t in sent[-1]["toolConfig"]["tools"]] == ["toolSpec", "cachePoint"]
        assert violations(sent[-1]) == []


# =================================================================================================================
# ResponseCache
# =================================================================================================================
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
