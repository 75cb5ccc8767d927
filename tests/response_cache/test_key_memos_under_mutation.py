"""Attack cases for the response-cache key memos (plugin/_message_digests.py, plugin/response_cache/_keys.py).

Every test asserts the contract:

    message_digests(msgs) == [sha256(canonical_json(m, exact_floats=False)).hexdigest()[:32].encode()
                              for m in canonical_messages(msgs)]

at every call, whatever happened to the message objects in between; and
``request_key(request, agent_id, scope) == build_response_cache_key(inputs_from_request(request, agent_id, scope))``.
Tests named ``test_strong_*`` check a stronger property: the key equals one computed from scratch (no memo at all:
fresh tool schemas, reference digests, the documented payload).  A failing test is a finding. Written as an
adversarial review of key version 2: 30 of these cases failed then (stale prefix snapshots compared by ==, value-memo
collisions between None and NaN ids or same-repr objects, a thread race, identity-keyed tool memos); all pass now.
"""

from __future__ import annotations

import copy
import gc
import hashlib
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from langchain.agents.middleware import ModelRequest
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool as make_tool
from pydantic import BaseModel

import promptcache._message_digests as md
import promptcache._tool_keys as tk
import promptcache.response_cache._keys as rk
import promptcache.response_cache._model_identity as mi
import promptcache.response_cache._tools_digest as td
from promptcache._keys import canonical_json, canonical_messages
from promptcache._message_digests import message_digests
from promptcache.response_cache._keys import (
    ResponseCacheKeyInputs,
    build_response_cache_key,
    describe_response_format,
    inputs_from_request,
    key_namespace,
    request_key,
)
from promptcache.testing import ScriptedChatModel

# ---------------------------------------------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------------------------------------------


def reference(messages: list[Any]) -> list[bytes]:
    return [
        hashlib.sha256(canonical_json(m, exact_floats=False)).hexdigest()[:32].encode()
        for m in canonical_messages(messages)
    ]


def check(messages: list[Any]) -> None:
    """The contract, at this call."""
    got = message_digests(messages)
    want = reference(messages)
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert len(got) == len(want) and not bad, f"stale/wrong digests at positions {bad}: {canonical_messages(messages)}"


def fresh_tool_schema(t: Any) -> Any:
    if isinstance(t, Mapping):
        return t
    from langchain_core.utils.function_calling import convert_to_openai_tool

    try:
        return convert_to_openai_tool(t)
    except Exception:  # noqa: BLE001
        return {"repr": repr(t)}


def scratch_key(inputs: ResponseCacheKeyInputs) -> str:
    """The documented key, computed with no memo of promptcache's at all."""
    payload = {
        "v": 2,
        "agent_id": inputs.agent_id,
        "scope": inputs.scope,
        "step": inputs.step_number,
        "model": dict(inputs.model),
        "settings": dict(inputs.settings),
        "prompt": [d.decode() for d in reference(list(inputs.prompt))],
        "tools": hashlib.sha256(canonical_json([fresh_tool_schema(t) for t in inputs.tools])).hexdigest()[:32],
        "tool_choice": inputs.tool_choice,
        "response_format": describe_response_format(inputs.response_format),
    }
    return f"{key_namespace(inputs.agent_id, inputs.scope)}:{hashlib.sha256(canonical_json(payload)).hexdigest()[:32]}"


def check_request(request: Any, agent_id: str = "bot", scope: str | None = None) -> None:
    got = request_key(request, agent_id, scope)
    want = build_response_cache_key(inputs_from_request(request, agent_id, scope))
    assert got == want


def check_request_strong(request: Any, agent_id: str = "bot", scope: str | None = None) -> None:
    check_request(request, agent_id, scope)
    got = request_key(request, agent_id, scope)
    assert got == scratch_key(inputs_from_request(request, agent_id, scope))


@pytest.fixture(autouse=True)
def empty_memos() -> None:
    md._MEMO.clear()
    md._PREFIXES.clear()
    md._memo_size = 0
    td._TOOLS_MEMO.clear()
    rk._HEAD_MEMO.clear()
    tk._TOOL_MEMO.clear()
    mi._MEMO.clear()


def convo() -> list[Any]:
    return [
        SystemMessage("sys"),
        HumanMessage("hello", id="h1"),
        AIMessage("", tool_calls=[{"name": "f", "args": {"n": 1, "flag": True}, "id": "call_1"}]),
        ToolMessage("result", tool_call_id="call_1", name="f"),
        AIMessage(
            [
                {"type": "text", "text": "t", "id": "b"},
                {"type": "tool_use", "id": "tu_2", "name": "g", "input": {"x": 1}},
            ],
            tool_calls=[{"name": "g", "args": {"x": 1}, "id": "tu_2"}],
        ),
        ToolMessage([{"type": "text", "text": "gone"}], tool_call_id="tu_2", status="error"),
        AIMessage("done", additional_kwargs={"k": 1}),
    ]


def request_for(messages: list[Any], **kw: Any) -> ModelRequest:
    kw.setdefault("model", ScriptedChatModel(temperature=0.3))
    kw.setdefault("system_message", None)
    kw.setdefault("tools", [])
    kw.setdefault("tool_choice", None)
    kw.setdefault("response_format", None)
    kw.setdefault("model_settings", {})
    return ModelRequest(messages=messages, **kw)


# ---------------------------------------------------------------------------------------------------------------
# baseline / breadth (expected to hold)
# ---------------------------------------------------------------------------------------------------------------


def test_empty_list() -> None:
    assert message_digests([]) == [] == reference([])
    assert message_digests(iter([])) == []


def test_list_of_one_repeated_and_edited() -> None:
    m = HumanMessage("a")
    check([m])
    check([m])
    m.content = "b"
    check([m])


def test_growing_conversation_fork_and_rewind() -> None:
    msgs = convo()
    for n in range(1, len(msgs) + 1):
        check(msgs[:n])
        check(msgs[:n])
    fork = msgs[:3] + [ToolMessage("other", tool_call_id="call_1", name="f")]
    check(fork)
    check(msgs[:2])  # rewind
    check(msgs)


def test_in_place_edits_of_every_container() -> None:
    msgs = convo()
    check(msgs)
    msgs[2].tool_calls[0]["args"]["n"] = 2
    check(msgs)
    msgs[4].content[0]["text"] = "changed"
    check(msgs)
    msgs[4].content[1]["input"]["x"] = [1, 2]
    check(msgs)
    msgs[5].content.append({"type": "text", "text": "more"})
    check(msgs)
    msgs[6].additional_kwargs["k"] = 2
    check(msgs)
    msgs[6].additional_kwargs["new"] = {"a": None}
    check(msgs)
    msgs[2].tool_calls.append({"name": "h", "args": {}, "id": "call_9"})
    check(msgs)
    msgs[2].tool_calls[0]["id"] = "call_renamed"
    check(msgs)


def test_in_place_int_to_bool_to_float_in_args() -> None:
    msgs = convo()
    check(msgs)
    for v in (True, 1.0, 1, False, 0, 0.0, -0.0, None, float("nan")):
        msgs[2].tool_calls[0]["args"]["n"] = v
        check(msgs)


def test_field_reassignment_without_validation() -> None:
    msgs = convo()
    check(msgs)
    msgs[1].content = "other"
    check(msgs)
    msgs[3].tool_call_id = "tu_2"
    check(msgs)
    msgs[3].name = None
    check(msgs)
    msgs[2].tool_calls = [{"name": "f", "args": {"n": 5}, "id": "call_1"}]
    check(msgs)
    msgs[6].additional_kwargs = {}
    check(msgs)
    msgs[4].content = "now text"
    check(msgs)
    msgs[1].type = "ai"
    check(msgs)


def test_str_subclass_content_and_fields() -> None:
    class S(str):
        pass

    msgs = [HumanMessage("x"), HumanMessage("y"), AIMessage("z")]
    check(msgs)
    msgs[2].content = S("z")
    check(msgs)
    msgs[1].name = S("nm")
    check(msgs)
    check([HumanMessage("x"), HumanMessage("y"), AIMessage(S("z"))])


def test_value_memo_int_bool_float_distinct_fresh_objects() -> None:
    for v in (1, True, 1.0, "1", [1], {"1": 1}, None):
        check([HumanMessage("q"), AIMessage("", tool_calls=[{"name": "f", "args": {"a": v}, "id": "c"}])])
        check([HumanMessage("q"), AIMessage("a", additional_kwargs={"x": v})])


def test_nan_and_infinities() -> None:
    msgs = [HumanMessage("q"), AIMessage("", tool_calls=[{"name": "f", "args": {"a": float("nan")}, "id": "c"}])]
    check(msgs)
    msgs[1].tool_calls[0]["args"]["a"] = float("inf")
    check(msgs)
    msgs[1].tool_calls[0]["args"]["a"] = None
    check(msgs)


def test_numpy_arrays() -> None:
    arr = np.array([1, 2, 3])
    msgs = [HumanMessage("q"), AIMessage("", tool_calls=[{"name": "f", "args": {"a": arr}, "id": "c"}])]
    check(msgs)
    arr[0] = 99
    check(msgs)
    msgs[1].tool_calls = [{"name": "f", "args": {"a": np.array([99, 2, 3])}, "id": "c"}]  # == raises
    check(msgs)
    msgs[1].additional_kwargs = {"emb": np.zeros(3, dtype=np.float32)}
    check(msgs)
    msgs[1].additional_kwargs["emb"][1] = 0.5
    check(msgs)
    check([HumanMessage(np.array(["a", "b"]))])


def test_dict_messages_in_place() -> None:
    msgs = [{"role": "user", "content": "hi", "id": "x"}, {"role": "assistant", "content": "yo"}]
    check(msgs)
    msgs[1]["content"] = "changed"
    check(msgs)
    mixed = [HumanMessage("a"), {"role": "assistant", "content": "b"}, AIMessage("c")]
    check(mixed)
    mixed[1]["content"] = "B"
    check(mixed)


def test_same_object_twice_in_one_list() -> None:
    a = AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c1"}])
    t = ToolMessage("r", tool_call_id="c1")
    msgs = [a, t, a, t]
    check(msgs)
    a.tool_calls[0]["id"] = "c2"
    check(msgs)
    check([t, a, t, a])


def test_messages_shared_between_conversations() -> None:
    shared = [SystemMessage("s"), HumanMessage("h")]
    a1 = AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "x"}])
    conv1 = shared + [a1, ToolMessage("1", tool_call_id="x")]
    conv2 = shared + [
        AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "y"}]),
        a1,
        ToolMessage("1", tool_call_id="x"),
    ]
    for _ in range(2):
        check(conv1)
        check(conv2)
    conv3 = [HumanMessage("other"), a1, ToolMessage("1", tool_call_id="x")]
    check(conv3)
    check(conv1)


def test_id_reuse_after_death() -> None:
    for i in range(300):
        msgs = [HumanMessage(f"h{i % 3}"), AIMessage(f"a{i}")]
        check(msgs)
        del msgs
        if i % 50 == 0:
            gc.collect()
    md._PREFIXES.clear()
    gc.collect()
    for i in range(300):
        check([HumanMessage(f"x{i}"), AIMessage("same")])


def test_model_construct_missing_fields() -> None:
    msgs = [
        HumanMessage.model_construct(content="hi"),
        ToolMessage.model_construct(content="r"),
        AIMessage.model_construct(),
        ChatMessage.model_construct(content="c"),
    ]
    check(msgs)
    check(msgs)
    check([ToolMessage.model_construct(content="r", tool_call_id="c", status="error")])


def test_ai_message_chunk_and_chat_message_role() -> None:
    chunk = AIMessageChunk(content="part", tool_call_chunks=[{"name": "f", "args": '{"a": 1}', "id": "c", "index": 0}])
    chat = ChatMessage("c", role="critic")
    msgs = [HumanMessage("q"), chunk, chat]
    check(msgs)
    chat.role = "judge"
    check(msgs)
    check([HumanMessage("q"), AIMessage("part", tool_calls=chunk.tool_calls), ChatMessage("c", role="judge")])


def test_tool_message_status_change() -> None:
    t = ToolMessage("r", tool_call_id="c")
    msgs = [AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c"}]), t]
    check(msgs)
    t.status = "error"
    check(msgs)
    t.status = "success"
    check(msgs)


def test_extra_attribute_via_object_setattr() -> None:
    msgs = convo()
    check(msgs)
    object.__setattr__(msgs[1], "extra", "x")
    check(msgs)
    object.__setattr__(msgs[1], "content", "sneaky")
    check(msgs)
    object.__setattr__(msgs[3], "status", "error")
    check(msgs)


def test_very_long_list() -> None:
    msgs: list[Any] = [SystemMessage("s")]
    for i in range(1500):
        msgs.append(AIMessage("", tool_calls=[{"name": "f", "args": {"i": i}, "id": f"c{i}"}]))
        msgs.append(ToolMessage(f"r{i % 7}", tool_call_id=f"c{i}"))
    check(msgs)
    msgs[1001].tool_calls[0]["args"]["i"] = -1
    check(msgs)
    check(msgs[:1001])


def test_tool_id_ordinals_shift_under_memo() -> None:
    # the same ToolMessage value at different ordinal positions, through the value memo
    t = lambda: ToolMessage("ok", tool_call_id="X")  # noqa: E731
    check([HumanMessage("a"), AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "X"}]), t()])
    check(
        [
            HumanMessage("a"),
            AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "Y"}]),
            AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "X"}]),
            t(),
        ]
    )
    check([HumanMessage("b"), t(), t()])


def test_fork_after_tool_ids_renumbered_earlier() -> None:
    a1 = AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "A"}, {"name": "f", "args": {}, "id": "B"}])
    msgs = [HumanMessage("q"), a1, ToolMessage("b", tool_call_id="B"), ToolMessage("a", tool_call_id="A")]
    check(msgs)
    a1.tool_calls.reverse()
    check(msgs)
    msgs2 = msgs[:2] + [ToolMessage("a", tool_call_id="A")]
    check(msgs2)


# ---------------------------------------------------------------------------------------------------------------
# request_key (expected to hold)
# ---------------------------------------------------------------------------------------------------------------


class Weather(BaseModel):
    city: str


def test_request_key_dict_tools_mutated() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    req = request_for(convo()[1:], tools=tools)
    check_request_strong(req)
    tools[0]["function"]["description"] = "new"
    check_request_strong(req)
    tools.append({"type": "function", "function": {"name": "g"}})
    check_request_strong(req)


def test_request_key_settings_and_tool_choice_mutated() -> None:
    settings: dict[str, Any] = {"temperature": 0.1}
    choice = {"type": "function", "function": {"name": "f"}}
    req = request_for(convo()[1:], model_settings=settings, tool_choice=choice, system_message=SystemMessage("s"))
    for scope in (None, "u1"):
        check_request_strong(req, scope=scope)
    settings["temperature"] = float("nan")
    check_request_strong(req)
    settings["temperature"] = 1
    check_request_strong(req)
    settings["temperature"] = True
    check_request_strong(req)
    choice["function"]["name"] = "g"
    check_request_strong(req)
    req = req.override(tool_choice="any")
    check_request_strong(req)
    settings.clear()
    check_request_strong(req)


def test_request_key_response_formats() -> None:
    msgs = convo()[1:]
    for fmt in (ToolStrategy(Weather), Weather, {"type": "object", "properties": {"a": {"type": "string"}}}):
        req = request_for(msgs, response_format=fmt)
        check_request_strong(req)
    fmt = {"type": "object", "properties": {}}
    req = request_for(msgs, response_format=fmt)
    check_request_strong(req)
    fmt["properties"]["b"] = {"type": "integer"}
    check_request_strong(req)


def test_request_key_messages_mutated_between_calls() -> None:
    msgs = convo()[1:]
    req = request_for(msgs, system_message=SystemMessage("s"))
    check_request_strong(req)
    msgs[1].tool_calls[0]["args"]["n"] = 42
    check_request_strong(req)
    req.system_message.content = "other"
    check_request_strong(req)
    msgs.append(HumanMessage("again"))
    check_request_strong(req)


def test_request_key_basetool_tools() -> None:
    @make_tool
    def lookup(order: str) -> str:
        """Look an order up."""
        return order

    req = request_for(convo()[1:], tools=[lookup])
    check_request_strong(req)
    check_request_strong(req)
    req = req.override(tools=[lookup, {"type": "function", "function": {"name": "x"}}])
    check_request_strong(req)


# ---------------------------------------------------------------------------------------------------------------
# attacks: reassignment to ==-equal values whose canonical JSON differs (prefix snapshot compares with ==)
# ---------------------------------------------------------------------------------------------------------------


def test_attack_reassign_tool_call_args_int_to_float() -> None:
    msgs = [HumanMessage("q"), AIMessage("", tool_calls=[{"name": "f", "args": {"n": 1}, "id": "c"}])]
    check(msgs)
    msgs[1].tool_calls = copy.deepcopy(msgs[1].tool_calls)
    msgs[1].tool_calls[0]["args"]["n"] = 1.0  # == the old list, JSON differs
    check(msgs)


def test_attack_reassign_tool_call_args_true_to_one() -> None:
    msgs = [HumanMessage("q"), AIMessage("", tool_calls=[{"name": "f", "args": {"flag": True}, "id": "c"}])]
    check(msgs)
    msgs[1].tool_calls = copy.deepcopy(msgs[1].tool_calls)
    msgs[1].tool_calls[0]["args"]["flag"] = 1
    check(msgs)


def test_attack_reassign_content_blocks_equal_but_json_differs() -> None:
    msgs = [HumanMessage("q"), HumanMessage([{"type": "text", "text": "t", "cache": 0}])]
    check(msgs)
    msgs[1].content = [{"type": "text", "text": "t", "cache": False}]
    check(msgs)


def test_attack_reassign_additional_kwargs_one_to_one_point_zero() -> None:
    msgs = [HumanMessage("q"), AIMessage("a", additional_kwargs={"k": 1})]
    check(msgs)
    msgs[1].additional_kwargs = {"k": 1.0}
    check(msgs)


def test_attack_reassign_additional_kwargs_key_int_to_bool() -> None:
    msgs = [HumanMessage("q"), AIMessage("a", additional_kwargs={"m": {1: "x"}})]
    check(msgs)
    msgs[1].additional_kwargs = {"m": {True: "x"}}  # {1: 'x'} == {True: 'x'}; JSON "1" vs "true"
    check(msgs)


def test_attack_reassign_numpy_bool_for_int() -> None:
    msgs = [HumanMessage("q"), AIMessage("a", additional_kwargs={"k": 1})]
    check(msgs)
    msgs[1].additional_kwargs = {"k": np.bool_(True)}
    check(msgs)


def test_attack_str_subclass_with_permissive_eq_content_reassigned() -> None:
    class Loose(str):
        def __eq__(self, other: object) -> bool:
            return isinstance(other, str)

        __hash__ = str.__hash__

    msgs = [HumanMessage("q"), AIMessage.model_construct(content=Loose("old"))]
    check(msgs)
    msgs[1].content = "new"
    check(msgs)


def test_attack_dict_keys_swapped_values_order_kept() -> None:
    m = HumanMessage("hi", id="zzz")  # __dict__ order: ..., type, name=None, id="zzz"
    msgs = [SystemMessage("s"), m]
    check(msgs)
    d = m.__dict__
    del d["name"], d["id"]
    d["id"] = None
    d["name"] = "zzz"  # values tuple unchanged, but the message now has a name
    check(msgs)


@pytest.mark.xfail(
    strict=True,
    reason="known gap (plugin/_message_digests.py docstring): a field the digest does not read removed and one "
    "it reads added in its place, by writing to __dict__ directly, bypassing pydantic",
)
def test_attack_dict_unread_field_replaced_by_a_read_one() -> None:
    m = HumanMessage("hi", id="zzz")
    msgs = [SystemMessage("s"), m]
    check(msgs)
    d = m.__dict__
    del d["id"]
    d["tool_call_id"] = "c"  # as many fields as before, the ones read before unchanged
    check(msgs)


def test_edits_in_place_after_every_call_of_a_growing_thread() -> None:
    """The prefix grows by one message a call; each call edits an earlier message in place first."""
    msgs = convo()
    edits = [
        lambda: msgs[2].tool_calls[0]["args"].update(n=1.0),
        lambda: msgs[6].additional_kwargs.update(k=True),
        lambda: setattr(msgs[1], "name", float("nan")),  # None before: both write null
        lambda: msgs[4].content[0].update(text="u"),
        lambda: setattr(msgs[5], "status", "success"),
        lambda: msgs[1].__dict__.update(name="n"),
    ]
    check(msgs[:1])
    for i, edit in enumerate(edits):
        check(msgs[: i + 2])
        edit()
        check(msgs[: i + 2])
        check(msgs[: i + 3])
    check(msgs)


# ---------------------------------------------------------------------------------------------------------------
# attacks: values JSON cannot tell apart but canonical_messages can (tool-call id numbering, defaults, .get)
# ---------------------------------------------------------------------------------------------------------------


def test_attack_prefix_tool_call_id_none_to_nan_in_place() -> None:
    a = AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": None}])
    msgs = [HumanMessage("q"), a]
    check(msgs)
    a.tool_calls[0]["id"] = float("nan")  # JSON null both times; canonical: None vs "#0"
    check(msgs)


def test_attack_value_memo_tool_call_id_none_vs_nan() -> None:
    check(
        [HumanMessage("q"), AIMessage.model_construct(content="", tool_calls=[{"name": "f", "args": {}, "id": None}])]
    )
    check(
        [
            HumanMessage("q"),
            AIMessage.model_construct(content="", tool_calls=[{"name": "f", "args": {}, "id": float("nan")}]),
        ]
    )


def test_attack_value_memo_two_nan_ids_vs_one_nan_twice() -> None:
    n1, n2 = float("nan"), float("nan")
    tcs = lambda a, b: [{"name": "f", "args": {}, "id": a}, {"name": "f", "args": {}, "id": b}]  # noqa: E731
    check([HumanMessage("q"), AIMessage.model_construct(content="", tool_calls=tcs(n1, n2))])  # "#0", "#1"
    check([HumanMessage("q"), AIMessage.model_construct(content="", tool_calls=tcs(n1, n1))])  # "#0", "#0"


def test_attack_value_memo_ids_with_equal_repr() -> None:
    class Id:
        def __repr__(self) -> str:
            return "ID"

    x, y = Id(), Id()
    tcs = lambda a, b: [{"name": "f", "args": {}, "id": a}, {"name": "f", "args": {}, "id": b}]  # noqa: E731
    check([HumanMessage("q"), AIMessage.model_construct(content="", tool_calls=tcs(x, y))])
    check([HumanMessage("q"), AIMessage.model_construct(content="", tool_calls=tcs(x, x))])


def test_attack_value_memo_tuple_vs_frozenset_ids() -> None:
    tcs = lambda a, b: [{"name": "f", "args": {}, "id": a}, {"name": "f", "args": {}, "id": b}]  # noqa: E731
    check([HumanMessage("q"), AIMessage.model_construct(content="", tool_calls=tcs(("a",), frozenset({"a"})))])
    check([HumanMessage("q"), AIMessage.model_construct(content="", tool_calls=tcs(("a",), ("a",)))])


def test_attack_value_memo_content_block_ids_nan_vs_none() -> None:
    blocks = lambda i: [{"type": "tool_use", "id": i, "name": "f", "input": {}}]  # noqa: E731
    check([HumanMessage("q"), AIMessage(blocks(None))])
    check([HumanMessage("q"), AIMessage(blocks(float("nan")))])


def test_attack_value_memo_status_absent_vs_none() -> None:
    a = ToolMessage.model_construct(content="r", tool_call_id="c", status=None)  # canonical: "status": null
    b = ToolMessage("r", tool_call_id="c")
    del b.__dict__["status"]  # canonical: no status (default "success")
    check([HumanMessage("q"), a])
    check([HumanMessage("q"), b])


def test_attack_value_memo_type_absent_vs_none() -> None:
    a = AIMessage.model_construct(content="r", type=None)  # role null
    b = AIMessage("r")
    del b.__dict__["type"]  # role "AIMessage"
    check([HumanMessage("q"), a])
    check([HumanMessage("q"), b])


def test_attack_value_memo_falsy_list_subclass_tool_calls() -> None:
    class Hidden(list):
        def __bool__(self) -> bool:  # canonical_messages: `if tool_calls:` skips it
            return False

    tc = {"name": "f", "args": {}, "id": "c"}
    check([HumanMessage("q"), AIMessage("", tool_calls=[dict(tc)])])
    check([HumanMessage("q"), AIMessage.model_construct(content="", tool_calls=Hidden([dict(tc)]))])


class OpaqueCall(Mapping):
    """A tool call as a non-dict Mapping whose repr (what orjson falls back to) does not show its values."""

    def __init__(self, **kw: Any) -> None:
        self.d = dict(kw)

    def __getitem__(self, k: str) -> Any:
        return self.d[k]

    def __iter__(self):
        return iter(self.d)

    def __len__(self) -> int:
        return len(self.d)

    def __repr__(self) -> str:
        return "OpaqueCall"


def test_attack_prefix_opaque_mapping_tool_call_edited_in_place() -> None:
    call = OpaqueCall(name="f", args={"a": 1}, id="c")
    m = AIMessage.model_construct(content="", tool_calls=[call])
    msgs = [HumanMessage("q"), m]
    check(msgs)
    call.d["args"] = {"a": 2}
    check(msgs)


def test_attack_value_memo_opaque_mapping_tool_calls() -> None:
    check(
        [
            HumanMessage("q"),
            AIMessage.model_construct(content="", tool_calls=[OpaqueCall(name="f", args={"a": 1}, id="c")]),
        ]
    )
    check(
        [
            HumanMessage("q"),
            AIMessage.model_construct(content="", tool_calls=[OpaqueCall(name="g", args={"a": 2}, id="c")]),
        ]
    )


def test_attack_value_memo_opaque_mapping_content_block() -> None:
    check([HumanMessage("q"), HumanMessage.model_construct(content=[OpaqueCall(type="text", text="one")])])
    check([HumanMessage("q"), HumanMessage.model_construct(content=[OpaqueCall(type="text", text="two")])])


# ---------------------------------------------------------------------------------------------------------------
# attacks: concurrency (a message changed while another thread digests it)
# ---------------------------------------------------------------------------------------------------------------


class Hook:
    """A value the canonical form writes through ``model_dump``: runs ``action`` on its n-th serialisation, which
    is exactly what another thread may do at that instant."""

    def __init__(self, on_call: int, action: Any) -> None:
        self.calls = 0
        self.on_call = on_call
        self.action = action

    def model_dump(self, mode: str = "python") -> Any:
        self.calls += 1
        if self.calls == self.on_call:
            self.action()
        return {"v": 1}


class Plain:
    def model_dump(self, mode: str = "python") -> Any:
        return {"v": 1}


def test_attack_race_value_memo_key_read_before_content_changes() -> None:
    m = AIMessage("old", additional_kwargs={"h": None})
    m.additional_kwargs["h"] = Hook(1, lambda: setattr(m, "content", "new"))  # between key read and _message
    message_digests([HumanMessage("q"), m])
    # later, an unrelated message whose content really is "old": served the digest computed for "new"
    check([HumanMessage("q2"), AIMessage("old", additional_kwargs={"h": Plain()})])


def test_attack_race_prefix_snapshot_taken_after_digest() -> None:
    m = AIMessage("text", name="before", additional_kwargs={"h": None})
    m.additional_kwargs["h"] = Hook(1, lambda: setattr(m, "name", "after"))  # during the first digest of the message
    msgs = [HumanMessage("q"), m]
    message_digests(msgs)
    check(msgs)  # nothing changes between this call and the reference


def test_attack_race_real_threads_content_reassigned_during_digest() -> None:
    """A real second thread reassigns ``content`` once, at a time spread over the digest call; afterwards (nothing
    running) the same list must digest to the reference. hashlib releases the GIL on large inputs, so the write
    can land between the hash and the prefix snapshot."""
    import time

    base = "x" * 3_000_000
    m = AIMessage(base)
    msgs = [HumanMessage("q"), m]
    m.content = base + "warm"
    t0 = time.perf_counter()
    message_digests(msgs)
    span = time.perf_counter() - t0
    stale = 0
    n = 80
    for i in range(n):
        m.content = f"{base}a{i}"
        new = f"{base}b{i}"
        delay = span * 1.5 * i / n

        def writer(new: str = new, delay: float = delay) -> None:
            time.sleep(delay)
            m.content = new

        t = threading.Thread(target=writer)
        t.start()
        message_digests(msgs)
        t.join()
        if message_digests(msgs) != reference(msgs):  # quiescent now
            stale += 1
    assert stale == 0, f"{stale}/{n} quiescent calls returned a stale digest after a concurrent write"


# ---------------------------------------------------------------------------------------------------------------
# stronger contract: the key equals one computed with no memo at all
# ---------------------------------------------------------------------------------------------------------------


def test_strong_basetool_description_mutated() -> None:
    @make_tool
    def lookup(order: str) -> str:
        """Look an order up."""
        return order

    req = request_for(convo()[1:], tools=[lookup])
    check_request_strong(req)
    lookup.description = "Delete the order."  # the provider now sees another tool schema
    check_request_strong(req)


def test_strong_function_tool_docstring_mutated() -> None:
    def lookup(order: str) -> str:
        """Look an order up."""
        return order

    req = request_for(convo()[1:], tools=[lookup])
    check_request_strong(req)
    lookup.__doc__ = "Delete the order."
    check_request_strong(req)


def test_strong_head_memo_ignores_extra_model_keys() -> None:
    base = dict(agent_id="bot", scope=None, prompt=[HumanMessage("q")], step_number=0)
    a = ResponseCacheKeyInputs(model={"provider": "p", "model_id": "m", "temperature": "0.1"}, **base)
    b = ResponseCacheKeyInputs(model={"provider": "p", "model_id": "m", "temperature": "0.9"}, **base)
    assert build_response_cache_key(a) == scratch_key(a)
    assert build_response_cache_key(b) == scratch_key(b)
    assert build_response_cache_key(a) != build_response_cache_key(b)


def test_attack_value_memo_block_ids_with_equal_repr() -> None:
    # content blocks are not validated: any id object reaches canonical_messages' numbering
    class Id:
        def __repr__(self) -> str:
            return "ID"

    x, y = Id(), Id()

    def blocks(a: object, b: object) -> list[dict[str, object]]:
        return [
            {"type": "tool_use", "id": a, "name": "f", "input": {}},
            {"type": "tool_use", "id": b, "name": "f", "input": {}},
        ]

    check([HumanMessage("q"), AIMessage(blocks(x, y))])  # "#0", "#1"
    check([HumanMessage("q"), AIMessage(blocks(x, x))])  # "#0", "#0"


def test_attack_value_memo_block_ids_tuple_vs_frozenset() -> None:
    def blocks(a: object, b: object) -> list[dict[str, object]]:
        return [
            {"type": "tool_use", "id": a, "name": "f", "input": {}},
            {"type": "tool_use", "id": b, "name": "f", "input": {}},
        ]

    check([HumanMessage("q"), AIMessage(blocks(("a",), frozenset({"a"})))])
    check([HumanMessage("q"), AIMessage(blocks(("a",), ("a",)))])


def test_attack_prefix_block_id_object_swapped_in_place() -> None:
    class Id:
        def __repr__(self) -> str:
            return "ID"

    x, y = Id(), Id()
    m = AIMessage(
        [
            {"type": "tool_use", "id": x, "name": "f", "input": {}},
            {"type": "tool_use", "id": y, "name": "f", "input": {}},
        ]
    )
    msgs = [HumanMessage("q"), m]
    check(msgs)
    m.content[1]["id"] = x  # JSON unchanged ("ID", "ID"); canonical: "#0","#1" -> "#0","#0"
    check(msgs)


# ---------------------------------------------------------------------------------------------------------------
# key-level consequences (request_key == build_response_cache_key holds, both stale; compared from scratch)
# ---------------------------------------------------------------------------------------------------------------


def test_strong_request_key_stale_after_args_reassigned_true_to_one() -> None:
    msgs = [
        HumanMessage("q"),
        AIMessage("", tool_calls=[{"name": "pay", "args": {"confirm": True}, "id": "c"}]),
        ToolMessage("ok", tool_call_id="c"),
    ]
    req = request_for(msgs)
    before = request_key(req, "bot", None)
    check_request_strong(req)
    msgs[1].tool_calls = copy.deepcopy(msgs[1].tool_calls)
    msgs[1].tool_calls[0]["args"]["confirm"] = 1
    check_request(req)  # the stated contract holds (both go through the same memos)
    assert request_key(req, "bot", None) != before, "a different prompt got the same response-cache key"


def test_strong_request_key_collision_status_none_vs_absent() -> None:
    a = ToolMessage.model_construct(content="r", tool_call_id="c", status=None)
    b = ToolMessage("r", tool_call_id="c")
    del b.__dict__["status"]
    call = lambda: AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c"}])  # noqa: E731
    ka = request_key(request_for([HumanMessage("q"), call(), a]), "bot", None)
    req_b = request_for([HumanMessage("q"), call(), b])
    assert canonical_messages([a]) != canonical_messages([b])
    assert request_key(req_b, "bot", None) == scratch_key(inputs_from_request(req_b, "bot", None)) != ka
