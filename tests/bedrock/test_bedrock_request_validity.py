"""Bedrock cache points: every request sent is one Bedrock accepts; strategies, token counting, unusual but valid input."""

from __future__ import annotations

import asyncio
import base64
import copy
import os
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from langchain_aws import ChatBedrockConverse
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from support.bedrock import add_stream_response
from support.bedrock_rules import Weather, all_points, joined, strip_points, violations

from promptcache import InMemoryServerCache, ResponseCache, with_processors
from promptcache.cache_points import default_count_tokens, get_model_info
from promptcache.cache_points._converse import place_cache_points
from promptcache.cache_points._strategy import is_cache_point
from promptcache.integrations.bedrock import BedrockCachePoints, CachePointChatBedrockConverse

CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"


SONNET45 = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"  # allows the 1-hour TTL


NOVA = "us.amazon.nova-pro-v1:0"


CP = {"cachePoint": {"type": "default"}}


HOUR = {"cachePoint": {"type": "default", "ttl": "1h"}}


PNG = b"\x89PNG\r\n\x1a\n" + b"0" * 32


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


def human(text: str, *extra: dict[str, Any]) -> HumanMessage:
    return HumanMessage(content=[{"type": "text", "text": text}, *extra])


@tool
def look(q: str) -> str:
    """Look something up in the knowledge base and return the matching passage."""
    return "found"


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
