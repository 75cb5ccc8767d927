"""``conversation_id`` without a thread id: the SHA-256 of the system prompt and the first message, the same on a
conversation's later requests (served from its memo) and for every shape of either."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from promptcache._keys import stable_hash
from promptcache.integrations._bedrock_conversation import _memo, conversation_id

CP = {"cachePoint": {"type": "default"}}

SHAPES = [
    ([{"text": "You are terse."}], [{"role": "user", "content": [{"text": "hi"}]}]),
    ([{"text": "You are terse."}], [{"role": "user", "content": "hi"}]),
    ([{"text": "a"}, {"text": "user"}], [{"role": "x", "content": "y"}]),
    ([{"text": "a"}], [{"role": "user", "content": "x"}]),
    ([], [{"role": "a", "content": "user"}]),
    ([{"text": "a"}], [{"role": "user", "content": [{"text": "x"}, {"text": "str"}]}]),
    ([{"text": "a"}], []),
    ([], []),
    ([{"text": "sys"}, CP], [{"role": "user", "content": [{"text": "q"}, CP]}]),
    ([{"text": "sys"}], [{"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": b"\x89"}}}]}]),
    ([{"text": "sys", "extra": 1}], [{"role": "user", "content": "q", "name": "n"}]),
]


@pytest.mark.parametrize("system,messages", SHAPES)
def test_the_id_is_the_hash_of_system_and_first_message_on_every_request(system: Any, messages: Any) -> None:
    expected = "hash:" + stable_hash({"system": system, "first": messages[:1]}, 32)
    for _ in range(3):  # the first request computes it, the later ones (new objects, same values) find it
        later = copy.deepcopy(messages) + ([{"role": "user", "content": "more"}] if messages else [])
        assert conversation_id(copy.deepcopy(system), later) == expected


def test_shapes_that_share_their_texts_get_different_ids() -> None:
    ids = {conversation_id(copy.deepcopy(s), copy.deepcopy(m)) for s, m in SHAPES}
    assert len(ids) == len(SHAPES)


def test_a_thread_id_wins_and_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    assert conversation_id([], [], {"configurable": {"thread_id": "t-1"}}) == "thread:t-1"
    monkeypatch.setattr("promptcache.integrations._bedrock_conversation.MEMO_ENTRIES", 4)
    for i in range(10):
        conversation_id([{"text": f"system {i}"}], [])
    assert len(_memo) <= 4
