"""A hit's messages are built without pydantic validation when the stored fields already have the validated shape,
and are then equal, field for field, to the messages validation builds; any other shape is validated as before."""

from __future__ import annotations

import orjson
import pytest
from langchain.agents.middleware import ModelResponse
from langchain_core.messages import AIMessage, ToolMessage, messages_from_dict

from promptcache.response_cache import _entry
from promptcache.response_cache._entry import CorruptEntry, decode_hit, encode_entry

REPLIES = [
    AIMessage("plain text", id="run-1"),
    AIMessage("", tool_calls=[{"name": "lookup", "args": {"q": "x", "n": [1, 2.5, None]}, "id": "call_1"}]),
    AIMessage(
        [{"type": "text", "text": "blocks"}, {"type": "tool_use", "id": "tu_1", "name": "f", "input": {}}, "tail"],
        tool_calls=[{"name": "f", "args": {}, "id": None}],
        name="assistant",
        additional_kwargs={"refusal": None, "nested": {"a": [1]}},
        response_metadata={"model_name": "m", "stop_reason": "end_turn", "promptcache": {"cache": "miss"}},
        usage_metadata={
            "input_tokens": 10,
            "output_tokens": 2,
            "total_tokens": 12,
            "input_token_details": {"cache_read": 4, "cache_creation": 1, "ephemeral_5m_input_tokens": 1},
            "output_token_details": {"reasoning": 1},
        },
    ),
]


@pytest.mark.parametrize("reply", REPLIES, ids=["text", "tool-call", "blocks-usage"])
def test_a_plain_entry_decodes_without_validation_to_equal_messages(reply: AIMessage) -> None:
    raw = encode_entry(ModelResponse(result=[reply]), now=100.0)
    stored = orjson.loads(raw)["messages"]
    validated = messages_from_dict(stored)
    built = _entry._build(orjson.loads(raw)["messages"])
    assert _entry._plain_ai(stored[0]["data"]) is not None  # the fast path was taken
    assert built == validated
    assert built[0].__dict__ == validated[0].__dict__
    assert list(built[0].tool_calls) == list(validated[0].tool_calls)
    assert [list(c) for c in built[0].tool_calls] == [list(c) for c in validated[0].tool_calls]  # key order too
    assert built[0].model_fields_set == validated[0].model_fields_set


def test_a_hit_carries_the_marker_and_zero_usage() -> None:
    raw = encode_entry(ModelResponse(result=[REPLIES[2]]), now=100.0)
    hit = decode_hit(raw, "response:a:k", now=101.5)
    ai = hit.result[0]
    assert isinstance(ai, AIMessage)
    assert ai.usage_metadata == {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    assert ai.response_metadata["promptcache"] == {
        "cache": "hit",
        "key": "response:a:k",
        "age_s": 1.5,
        "usage": REPLIES[2].usage_metadata,
    }
    assert ai.id is not None and ai.id.startswith("lc_run--") and ai.id != REPLIES[2].id
    assert ai.content == REPLIES[2].content


@pytest.mark.parametrize(
    "change",
    [
        {"tool_calls": [{"name": "f", "args": {}, "id": "c", "extras": {"x": 1}}]},  # extras: validation drops them
        {"tool_calls": [{"name": "f", "args": {}}]},  # no id / type: validation fills them in
        {"invalid_tool_calls": [{"name": "f", "args": "{", "id": "c", "error": None, "type": "invalid_tool_call"}]},
        {"usage_metadata": {"input_tokens": 1.0, "output_tokens": 0, "total_tokens": 1}},  # a float count
        {"unknown_field": 1},  # an extra field
        {"content": ["text", 3]},  # not a block
    ],
)
def test_other_shapes_are_validated_as_before(change: dict[str, object]) -> None:
    data = {**orjson.loads(encode_entry(ModelResponse(result=[REPLIES[0]])))["messages"][0]["data"], **change}
    assert _entry._plain_ai(data) is None
    stored = [{"type": "ai", "data": data}]
    try:
        validated = messages_from_dict(orjson.loads(orjson.dumps(stored)))
    except Exception:  # noqa: BLE001 - validation refuses it: so does the decoder
        with pytest.raises(CorruptEntry):
            _entry._build(stored)
        return
    assert _entry._build(stored) == validated


def test_a_tool_message_is_validated() -> None:
    response = ModelResponse(result=[REPLIES[1], ToolMessage("done", tool_call_id="call_1", name="lookup")])
    built = _entry._build(orjson.loads(encode_entry(response))["messages"])
    assert built == [REPLIES[1], ToolMessage("done", tool_call_id="call_1", name="lookup")]


def test_an_empty_reply_is_still_corrupt() -> None:
    stored = [{"type": "ai", "data": {"content": "", "type": "ai"}}]
    with pytest.raises(CorruptEntry, match="empty reply"):
        _entry._build(stored)


def test_the_installed_pydantic_takes_the_direct_construction() -> None:
    assert _entry._construct is _entry._direct


def test_fresh_ids_are_version_4_uuids() -> None:
    import uuid

    ids = {_entry._fresh_id() for _ in range(1000)}
    assert len(ids) == 1000
    for value in ids:
        assert value.startswith("lc_run--")
        parsed = uuid.UUID(value[len("lc_run--") :])
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, value[len("lc_run--") :])


@pytest.mark.parametrize("reply", REPLIES, ids=["text", "tool-call", "blocks-usage"])
def test_a_one_message_hit_is_built_marked_as_the_general_path_marks_it(reply: AIMessage) -> None:
    raw = encode_entry(ModelResponse(result=[reply]), now=100.0)
    hit = decode_hit(raw, "response:a:k", now=101.0).result[0]
    general = _entry._build(orjson.loads(raw)["messages"])[0]  # built, then marked field by field
    assert isinstance(general, AIMessage)
    meta = dict(general.response_metadata)
    meta["promptcache"] = {"cache": "hit", "key": "response:a:k", "age_s": 1.0, "usage": general.usage_metadata}
    general.response_metadata = meta
    general.usage_metadata = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    general.id = hit.id
    assert list(hit.__dict__.items()) == list(general.__dict__.items())  # values and field order
    assert hit.model_fields_set == general.model_fields_set
    assert hit.__pydantic_extra__ == general.__pydantic_extra__ and hit.__pydantic_private__ is None
