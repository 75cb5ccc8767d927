"""Per-message digests: equal to hashing each canonical message, and memos (by value, by object) that never go stale."""

from __future__ import annotations

import inspect
import types
from typing import Any

import numpy as np
import pytest
from langchain.agents.middleware import ModelRequest
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel
from support.digests import reference

import promptcache._message_digests as md
from promptcache import InMemoryServerCache, ResponseCache, build_response_cache_key
from promptcache._keys import canonical_json
from promptcache.response_cache._keys import inputs_from_request, request_key
from promptcache.testing import ScriptedChatModel


def conversation() -> list[Any]:
    return [
        SystemMessage("You are a helpful agent. " * 30),
        HumanMessage('I need help with {"order": "8JX2WO"}\n' * 20, id="h1"),
        AIMessage("", tool_calls=[{"name": "lookup", "args": {"order_id": "8JX2WO", "n": 1}, "id": "call_1"}]),
        ToolMessage('{"status": "shipped"}' * 20, tool_call_id="call_1", name="lookup"),
        AIMessage(
            [
                {"type": "text", "text": "Checking", "id": "b1"},
                {"type": "tool_use", "id": "toolu_2", "name": "lookup", "input": {"order_id": "X"}},
            ],
            tool_calls=[{"name": "lookup", "args": {"order_id": "X"}, "id": "toolu_2"}],
        ),
        ToolMessage([{"type": "text", "text": "gone"}], tool_call_id="toolu_2", status="error"),
        HumanMessage(
            [{"type": "text", "text": "see"}, {"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"}]
        ),
        AIMessage("It shipped.", additional_kwargs={"refusal": None}),
    ]


@pytest.fixture(autouse=True)
def empty_memos() -> None:
    md._MEMO.clear()
    md._PREFIXES.clear()
    md._memo_size = 0


def prefix_of(messages: list[Any]) -> Any:
    return md._PREFIXES[tuple(map(id, messages[:2]))]


def test_digests_equal_the_definition_cold_and_from_both_memos() -> None:
    messages = conversation()
    expected = reference(messages)
    assert md.message_digests(messages) == expected  # cold
    assert len(md._MEMO) == 8 and prefix_of(messages).messages == tuple(messages)
    assert md.message_digests(messages) == expected  # the prefix, whole
    assert md.message_digests(iter(messages)) == expected  # any iterable
    rebuilt = conversation()  # new objects, same values (a checkpoint read back): the value memo
    assert md.message_digests(rebuilt) == expected
    assert len(md._MEMO) == 8 and len(md._PREFIXES) == 2
    assert md.prompt_digest_json(messages) == canonical_json([d.decode() for d in expected])
    assert md.prompt_digest_json([]) == b"[]" == canonical_json([])


def test_a_growing_conversation_extends_its_prefix() -> None:
    messages = conversation()
    md.message_digests(messages[:4])
    assert len(prefix_of(messages).messages) == 4
    longer = messages[:6]  # the next call of the same thread: two new messages
    md._MEMO.clear()  # so only the prefix can serve the first four
    assert md.message_digests(longer) == reference(longer)
    assert len(md._MEMO) == 2  # the two new messages went through the value memo
    entry = prefix_of(messages)
    assert len(entry.messages) == 6 and entry.numbering == {"call_1": "#0", "toolu_2": "#1"}
    assert entry.counts == [0, 0, 1, 1, 2, 2]  # tool ids numbered after each message
    shorter = messages[:3]  # a rewind: its three messages come from the prefix
    md._MEMO.clear()
    assert md.message_digests(shorter) == reference(shorter)
    assert md._MEMO == {} and len(prefix_of(messages).messages) == 3


def test_a_fork_reuses_the_shared_start() -> None:
    messages = conversation()
    md.message_digests(messages)
    fork = [
        *messages[:4],
        AIMessage("", tool_calls=[{"name": "lookup", "args": {}, "id": "toolu_2"}]),
        ToolMessage("again", tool_call_id="toolu_2"),
    ]  # same history, another continuation
    md._MEMO.clear()
    assert md.message_digests(fork) == reference(fork)
    assert len(md._MEMO) == 2  # only the two new messages were digested by value
    assert prefix_of(messages).numbering == {"call_1": "#0", "toolu_2": "#1"}


def test_a_dict_message_keeps_the_prompt_out_of_the_prefix_memo() -> None:
    messages = [*conversation(), {"role": "user", "content": "a dict message", "id": "d1"}]
    assert md.message_digests(messages) == reference(messages)
    assert md._PREFIXES == {}


@pytest.mark.parametrize(
    "edit", ["content", "args_1_to_true", "block_text", "kwargs", "fill_empty", "status", "new_id"]
)
def test_in_place_edits_after_a_prefix_was_seen(edit: str) -> None:
    messages = conversation()
    md.message_digests(messages)
    if edit == "content":
        messages[1].content = "a new question"  # a field reassigned
    elif edit == "args_1_to_true":
        messages[2].tool_calls[0]["args"]["n"] = True  # equal in Python (1 == True), not in JSON
    elif edit == "block_text":
        messages[4].content[0]["text"] = "Checked"  # a content block edited in place
    elif edit == "kwargs":
        messages[7].additional_kwargs["refusal"] = "no"  # a container edited in place
    elif edit == "fill_empty":
        messages[7].tool_calls.append({"name": "lookup", "args": {}, "id": "call_9", "type": "tool_call"})
    elif edit == "status":
        messages[3].status = "error"
    else:
        messages[1].id = "h2"  # run metadata: not in the key, but the snapshot no longer holds: by value
    digests = md.message_digests(messages)
    assert digests == reference(messages)
    assert (digests == reference(conversation())) == (edit == "new_id")


def test_same_message_at_another_position_gets_its_own_ordinal() -> None:
    call = AIMessage("", tool_calls=[{"name": "get", "args": {"id": "JG7"}, "id": "call_abc"}])
    result = ToolMessage("found JG7 " * 40, tool_call_id="call_abc")
    first = [HumanMessage("hi"), call, result]
    second = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "get", "args": {}, "id": "call_0"}]),
        ToolMessage("x", tool_call_id="call_0"),
        call,
        result,
    ]
    assert md.message_digests(first) == reference(first)
    assert md.message_digests(second) == reference(second)  # call and result now hold ordinal #1, not #0
    assert md.message_digests(first)[1] != md.message_digests(second)[3]
    entry = md._MEMO[next(k for k in md._MEMO if k[1] == "found JG7 " * 40)]
    assert entry[0] == ("call_abc",) and set(entry[1]) == {("#0",), ("#1",)}


def test_fields_that_cannot_be_memoised_are_digested_directly() -> None:
    odd = HumanMessage("q")
    odd.name = ["not", "hashable"]  # no validation on assignment
    big = AIMessage("", tool_calls=[{"name": "f", "args": {"n": 2**70}, "id": "c"}])  # orjson refuses 2**70
    for messages in ([odd, HumanMessage("r")], [HumanMessage("r"), big]):
        assert md.message_digests(messages) == reference(messages)
        assert md.message_digests(messages) == reference(messages)
    assert md._PREFIXES == {}
    numeric_name = HumanMessage("q")
    numeric_name.name = 1  # == True, but not the same JSON: never snapshotted
    messages = [numeric_name, HumanMessage("r")]
    assert md.message_digests(messages) == reference(messages)
    assert md._PREFIXES == {}
    numeric_name.name = True
    assert md.message_digests(messages) == reference(messages)


@pytest.mark.parametrize("odd", [np.arange(3), b"\x89PNG", {"a"}, frozenset({"a"}), object()])
def test_containers_holding_non_json_values_go_without_the_memos(odd: Any) -> None:
    """Values orjson would write through ``default`` (repr, sorted lists, hashes) can share JSON with others."""
    message = AIMessage("a", additional_kwargs={"v": odd})
    messages = [HumanMessage("q"), message]
    assert md.message_digests(messages) == reference(messages)
    assert md._PREFIXES == {} and len(md._MEMO) == 1  # only the plain message
    message.additional_kwargs = {"v": "plain"}
    assert md.message_digests(messages) == reference(messages)
    assert len(md._PREFIXES) == 1


def test_memos_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(md, "_MEMO_LIMIT", 1000)
    md.message_digests([HumanMessage("x" * 600)])
    assert len(md._MEMO) == 1 and md._memo_size == 600
    second = [HumanMessage("y" * 600)]
    assert md.message_digests(second) == reference(second)
    assert len(md._MEMO) == 1 and md._memo_size == 600  # cleared before the new entry
    monkeypatch.setattr(md, "_MEMO_MAX_ENTRIES", 2)
    md.message_digests([HumanMessage("a"), HumanMessage("b"), HumanMessage("c")])
    assert len(md._MEMO) <= 2
    monkeypatch.setattr(md, "_PREFIXES_MAX", 2)
    for text in ("d", "e", "f"):
        md.message_digests([HumanMessage(text)])
    assert len(md._PREFIXES) <= 2


class Weather(BaseModel):
    city: str


@pytest.mark.parametrize("variant", ["plain", "system", "settings", "format", "tool_choice", "no_tools"])
def test_request_key_equals_the_key_of_the_inputs(variant: str) -> None:
    model = ScriptedChatModel(temperature=0.3)
    messages = conversation()[1:]
    request = ModelRequest(
        model=model,
        messages=messages,
        system_message=SystemMessage("Be brief.") if variant == "system" else None,
        tools=[] if variant == "no_tools" else [{"type": "function", "function": {"name": "f"}}],
        tool_choice={"type": "function", "function": {"name": "f"}} if variant == "tool_choice" else None,
        response_format=ToolStrategy(Weather) if variant == "format" else None,
        model_settings={"temperature": float("nan")} if variant == "settings" else {},
    )
    for scope in (None, "user-7"):
        assert request_key(request, "bot", scope) == build_response_cache_key(
            inputs_from_request(request, "bot", scope)
        )


def test_hook_signatures_are_pinned_to_the_computed_ones() -> None:
    for cls in (ResponseCache,):
        for name in ("wrap_model_call", "awrap_model_call"):
            func = cls.__dict__[name]
            fresh = types.FunctionType(func.__code__, func.__globals__, name, func.__defaults__, func.__closure__)
            fresh.__annotations__ = func.__annotations__
            assert func.__dict__["__signature__"] == inspect.signature(fresh)
    bound = ResponseCache(InMemoryServerCache()).wrap_model_call
    assert list(inspect.signature(bound).parameters) == ["request", "handler"]


def test_a_chat_role_that_is_a_str_subclass_is_not_memoised() -> None:
    class Role(str):
        pass

    odd = ChatMessage("hello", role="user")
    odd.role = Role("user")
    plain = ChatMessage("hello", role="user")
    assert md.message_digests([odd]) == reference([odd]) == md.message_digests([plain]) == reference([plain])
