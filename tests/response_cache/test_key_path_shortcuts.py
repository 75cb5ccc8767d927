"""The key path's shortcuts give what the long way gives: long texts keyed by fingerprint, the plain tool memo,
the head read from the model's parts, and the miss marker's direct copy."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from support.digests import reference

import promptcache._message_digests as md
import promptcache._tool_keys as tk
from promptcache import build_response_cache_key
from promptcache.response_cache._entry import with_metadata
from promptcache.response_cache._keys import _head, _request_head, inputs_from_request, request_key
from promptcache.response_cache._model_identity import model_identity
from promptcache.testing import ScriptedChatModel


@pytest.fixture(autouse=True)
def _empty_memos() -> Iterator[None]:
    md._MEMO.clear()
    md._PREFIXES.clear()
    yield
    md._MEMO.clear()
    md._PREFIXES.clear()


def test_long_texts_sharing_length_and_ends_keep_their_own_digests() -> None:
    # 2,000 characters, the same first and last 64: one fingerprint, two texts
    a = "x" * 64 + "a" * 1872 + "y" * 64
    b = "x" * 64 + "b" * 1872 + "y" * 64
    for text in (a, b, a, b):  # new message objects each time: only the value memo can serve them
        messages = [HumanMessage(text)]
        assert md.message_digests(messages) == reference(messages)
    assert md.message_digests([HumanMessage(a)]) != md.message_digests([HumanMessage(b)])


def test_long_text_rebuilt_as_a_new_string_hits_the_value_memo() -> None:
    text = "a long tool result " * 200  # 3,800 characters
    first = md.message_digests([HumanMessage(text)])
    entries = len(md._MEMO)
    again = md.message_digests([HumanMessage("".join(list(text)))])  # equal text, another str object
    assert again == first == reference([HumanMessage(text)])
    assert len(md._MEMO) == entries == 1


def test_plain_tool_memo_is_emptied_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return order_id

    monkeypatch.setattr(tk, "_TOOL_MEMO_MAX", 2)
    tk._TOOL_MEMO.clear()
    tk._TOOL_MEMO.update({-1: (None, (), {}), -2: (None, (), {})})
    schema = tk.canonical_tool(lookup)
    assert list(tk._TOOL_MEMO) == [id(lookup)]
    assert tk.canonical_tool(lookup) is schema
    assert schema == {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look an order up.",
            "parameters": {"properties": {"order_id": {"type": "string"}}, "required": ["order_id"], "type": "object"},
        },
    }


def test_head_from_the_model_parts_equals_the_head_of_its_identity() -> None:
    for model in (ScriptedChatModel(), ScriptedChatModel(temperature=0.4), ScriptedChatModel().bind(stop=["x"])):
        assert _request_head("agent", model) == _head("agent", model_identity(model))


def test_request_key_equals_the_key_of_its_inputs() -> None:
    model = ScriptedChatModel(temperature=0.2)
    request = ModelRequest(
        model=model, messages=[HumanMessage("hi " * 600)], system_message=SystemMessage("s"), tools=[]
    )
    assert request_key(request, "agent", "user-1") == build_response_cache_key(
        inputs_from_request(request, "agent", "user-1")
    )
    assert request_key(request, "agent", "user-1") == request_key(request, "agent", "user-1")


def test_miss_marker_copy_equals_model_copy() -> None:
    message = AIMessage(
        "done",
        id="run-1",
        tool_calls=[{"name": "f", "args": {"n": 1}, "id": "c1"}],
        usage_metadata={"input_tokens": 3, "output_tokens": 1, "total_tokens": 4},
        response_metadata={"model_name": "m"},
        custom_extra="kept",
    )
    meta = {"model_name": "m", "promptcache": {"cache": "miss", "key": "k"}}
    direct, reference_copy = with_metadata(message, meta), message.model_copy(update={"response_metadata": meta})
    assert direct == reference_copy
    assert list(direct.__dict__) == list(reference_copy.__dict__)
    assert direct.model_fields_set == reference_copy.model_fields_set
    assert direct.__pydantic_extra__ == reference_copy.__pydantic_extra__ == {"custom_extra": "kept"}
    assert direct.__pydantic_extra__ is not message.__pydantic_extra__
    assert message.response_metadata == {"model_name": "m"}  # the original is left as it was
