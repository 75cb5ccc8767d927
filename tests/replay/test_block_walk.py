"""The shared content walk: the typed (Anthropic / OpenAI / LangChain) and Converse dialects, and a format's own."""

from __future__ import annotations

import pytest

from promptcache.replay._bad_record import BadRecord
from promptcache.replay._block_walk import Dialect, Unsupported, walk_blocks
from promptcache.replay._converse_blocks import CachePoint, _converse_blocks
from promptcache.replay._messages import TYPED_BLOCKS
from promptcache.replay._transcript import Block


def test_typed_and_converse_dialects_read_the_same_turn_alike() -> None:
    typed = [
        {"type": "text", "text": "look"},
        {"type": "tool_use", "id": "t1", "name": "grep", "input": {"q": "x"}},
        {"type": "thinking", "thinking": "hmm"},
    ]
    converse = [
        {"text": "look"},
        {"toolUse": {"toolUseId": "t1", "name": "grep", "input": {"q": "x"}}},
        {"reasoningContent": {"reasoningText": {"text": "hmm"}}},
    ]
    expected = [
        Block("text", "look"),
        Block("tool_use", '{"q":"x"}', "grep", "t1"),
        Block("reasoning", "hmm"),
    ]
    assert walk_blocks(typed, ("content",), TYPED_BLOCKS) == expected
    assert _converse_blocks(converse, ("content",), [], "message", 0) == expected


def test_typed_dialect_takes_plain_strings_and_converse_does_not() -> None:
    assert walk_blocks("hi", (), TYPED_BLOCKS) == [Block("text", "hi")]
    assert walk_blocks(None, (), TYPED_BLOCKS) == []
    assert walk_blocks(["a", {"type": "text", "text": "b"}], (), TYPED_BLOCKS) == [
        Block("text", "a"),
        Block("text", "b"),
    ]
    with pytest.raises(BadRecord) as info:
        _converse_blocks("hi", ("m",), [], "message", 0)
    assert (info.value.where, info.value.reason) == (("m",), "content must be a list of blocks, got 'hi'")


def test_converse_cache_points_are_recorded_after_the_blocks_so_far() -> None:
    points: list[CachePoint] = []
    blocks = _converse_blocks(
        [{"text": "a"}, {"cachePoint": {"type": "default", "ttl": "1h"}}, {"text": "b"}, {"cachePoint": {}}],
        ("messages", 2, "content"),
        points,
        "message",
        2,
    )
    assert blocks == [Block("text", "a"), Block("text", "b")]
    assert points == [
        {"where": "message", "index": 2, "after": 1, "ttl": "1h"},
        {"where": "message", "index": 2, "after": 2, "ttl": None},
    ]


def test_a_handler_refusing_its_body_reports_the_kind_as_unsupported() -> None:
    with pytest.raises(BadRecord) as info:
        _converse_blocks([{"text": "a"}, {"toolUse": "not an object"}], ("c",), [], "message", 0)
    assert (info.value.where, info.value.reason) == (("c", 1), "unsupported Converse content block 'toolUse'")
    with pytest.raises(BadRecord) as typed:
        walk_blocks([{"type": "hologram"}], ("c",), TYPED_BLOCKS)
    assert (typed.value.where, typed.value.reason) == (("c", 0), "unsupported content block type 'hologram'")


def test_a_format_states_only_its_kinds() -> None:
    def kind_of(part: object, at: tuple[str | int, ...]) -> tuple[object, object]:
        if not isinstance(part, list) or len(part) != 2:
            raise BadRecord(at, "a pair")
        return part[0], part[1]

    def say(body: object, _at: tuple[str | int, ...], n: int, prefix: object) -> Block:
        return Block("text", f"{prefix}{n}:{body}")

    def skip(body: object, _at: tuple[str | int, ...], _n: int, _ctx: object) -> None:
        if body == "bad":
            raise Unsupported
        return None

    pairs = Dialect(kind_of, {"say": say, "skip": skip}, False, "pairs only", "no {} here")
    assert walk_blocks([["say", "a"], ["skip", 1], ["say", "b"]], (), pairs, ">") == [
        Block("text", ">0:a"),
        Block("text", ">1:b"),
    ]
    with pytest.raises(BadRecord) as info:
        walk_blocks([["skip", "bad"]], ("x",), pairs)
    assert (info.value.where, info.value.reason) == (("x", 0), "no 'skip' here")
    with pytest.raises(BadRecord) as shape:
        walk_blocks({"say": 1}, ("x",), pairs)
    assert shape.value.reason == 'pairs only, got {"say":1}'
