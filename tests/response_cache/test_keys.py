"""Response-cache keys: format, what counts and what does not, step numbers, canonical messages."""

from __future__ import annotations

import dataclasses
import hashlib

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from promptcache import ResponseCacheKeyInputs, build_response_cache_key
from promptcache._keys import canonical_messages
from promptcache.response_cache._keys import custom_key, model_identity, step_number
from promptcache.testing import ScriptedChatModel


def inputs(**changes: object) -> ResponseCacheKeyInputs:
    base = ResponseCacheKeyInputs(
        agent_id="bot",
        scope=None,
        model=model_identity(ScriptedChatModel()),
        prompt=[SystemMessage("sys"), HumanMessage("hi", id="m1")],
        step_number=0,
    )
    return dataclasses.replace(base, **changes)


def test_key_format_and_scope_segment() -> None:
    key = build_response_cache_key(inputs())
    prefix, agent, digest = key.split(":")
    assert (prefix, agent, len(digest)) == ("response", "bot", 32)
    scoped = build_response_cache_key(inputs(scope="user-42"))
    assert scoped.split(":")[2] == hashlib.sha256(b"user-42").hexdigest()[:8]
    assert "user-42" not in scoped
    assert scoped.split(":")[3] != digest  # the scope is hashed into the digest too


def test_key_is_deterministic_and_pinned() -> None:
    """Pinned: a change here silently invalidates every stored entry; bump the key version on purpose instead."""
    assert build_response_cache_key(inputs()) == build_response_cache_key(inputs())
    assert build_response_cache_key(inputs()) == "response:bot:b245eb0889e1724ac63e9f21acf20111"


def test_ids_and_metadata_are_left_out() -> None:
    a = [
        HumanMessage("q", id="1"),
        AIMessage("", id="2", response_metadata={"x": 1}, tool_calls=[{"name": "t", "args": {"k": 1}, "id": "call_A"}]),
        ToolMessage("r", tool_call_id="call_A", id="3"),
    ]
    b = [
        HumanMessage("q", id="9"),
        AIMessage(
            "",
            id="8",
            usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
            tool_calls=[{"name": "t", "args": {"k": 1}, "id": "toolu_Z"}],
        ),
        ToolMessage("r", tool_call_id="toolu_Z", id="7"),
    ]
    assert (
        canonical_messages(a)
        == canonical_messages(b)
        == [
            {"role": "human", "content": "q"},
            {"role": "ai", "content": "", "tool_calls": [{"name": "t", "args": {"k": 1}, "id": "#0"}]},
            {"role": "tool", "content": "r", "tool_call_id": "#0"},
        ]
    )
    assert build_response_cache_key(inputs(prompt=a)) == build_response_cache_key(inputs(prompt=b))


def test_tool_result_pairing_counts() -> None:
    calls = [{"name": "t", "args": {}, "id": "x"}, {"name": "t", "args": {}, "id": "y"}]
    right = [AIMessage("", tool_calls=calls), ToolMessage("1", tool_call_id="x"), ToolMessage("2", tool_call_id="y")]
    swapped = [AIMessage("", tool_calls=calls), ToolMessage("1", tool_call_id="y"), ToolMessage("2", tool_call_id="x")]
    assert build_response_cache_key(inputs(prompt=right)) != build_response_cache_key(inputs(prompt=swapped))


def test_every_field_counts() -> None:
    base = build_response_cache_key(inputs())
    variants = [
        inputs(agent_id="other"),
        inputs(step_number=1),
        inputs(prompt=[SystemMessage("sys"), HumanMessage("hi!")]),
        inputs(prompt=[SystemMessage("sys2"), HumanMessage("hi")]),
        inputs(tool_choice="any"),
        inputs(settings={"temperature": 0.2}),
        inputs(model=model_identity(ScriptedChatModel(temperature=0.3))),
        inputs(tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}]),
    ]
    keys = {build_response_cache_key(v) for v in variants}
    assert len(keys) == len(variants) and base not in keys


def test_image_bytes_key_by_content() -> None:
    def with_image(data: bytes) -> list:
        return [HumanMessage(content=[{"type": "image", "base64": data, "mime_type": "image/png"}])]

    assert build_response_cache_key(inputs(prompt=with_image(b"\x89PNG-a"))) != build_response_cache_key(
        inputs(prompt=with_image(b"\x89PNG-b"))
    )
    assert build_response_cache_key(inputs(prompt=with_image(b"same"))) == build_response_cache_key(
        inputs(prompt=with_image(b"same"))
    )


def test_step_number() -> None:
    tc = [{"name": "t", "args": {}, "id": "a"}]
    assert step_number([HumanMessage("q")]) == 0
    assert step_number([HumanMessage("q"), AIMessage("", tool_calls=tc), ToolMessage("r", tool_call_id="a")]) == 1
    assert (
        step_number(
            [
                HumanMessage("q"),
                AIMessage("a"),
                HumanMessage("q2"),
                AIMessage("", tool_calls=tc),
                ToolMessage("r", tool_call_id="a"),
                AIMessage("", tool_calls=tc),
            ]
        )
        == 2
    )
    assert step_number([AIMessage("greeting")]) == 1


def test_custom_key_namespacing() -> None:
    assert custom_key("bot", None, "faq") == "response:bot:key:faq"
    digest = hashlib.sha256(b"u1").hexdigest()
    assert custom_key("bot", "u1", "faq") == f"response:bot:{digest[:8]}:key:faq@{digest[8:40]}"
    long = custom_key("bot", None, "x" * 500)
    assert long == "response:bot:key:sha256-" + hashlib.sha256(b"x" * 500).hexdigest()[:32]
    # step >= 1 of a tool loop: its own entry; the tag sits before the value, so no value can imitate it
    assert custom_key("bot", None, "faq", step=2) == "response:bot:key+2:faq"
    assert custom_key("bot", "u1", "faq", step=1) == f"response:bot:{digest[:8]}:key+1:faq@{digest[8:40]}"
    assert custom_key("bot", None, "faq", step=0) == custom_key("bot", None, "faq")
