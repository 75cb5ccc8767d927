"""The shortcuts placement takes on every request give exactly what the general path gives.

- fingerprints come from a memo keyed by the canonical JSON they hash: the same value as `stable_hash`, bounded;
- placements built by the strategies' own constructor equal (and hash, pickle and dump like) the dataclass's;
- a range of token counts summed directly equals the running sums taken once many ranges are asked for;
- a message holding a dataclass instance is never reused from the previous request's JSON (counted whole);
- a text block's quick "may a point follow it" answer is the rule table's.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import promptcache.cache_points._fingerprints as fingerprints
from promptcache._keys import stable_hash
from promptcache.cache_points import (
    AnchoredTailStrategy,
    CachePointPlacement,
    CacheStrategyConfig,
    MultiPointStrategy,
    default_count_tokens,
    get_model_info,
)
from promptcache.cache_points._converse import place_cache_points
from promptcache.cache_points._fingerprints import message_fingerprint

CLAUDE = get_model_info("us.anthropic.claude-sonnet-4-20250514-v1:0", min_tokens_per_cache_point=60)
NOVA = get_model_info("amazon.nova-pro-v1:0", min_tokens_per_cache_point=60)
SYSTEM = [{"text": "You are a careful support agent. " * 20}]


def _agent(n: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "question zero"}]}]
    for i in range(1, n, 2):
        use = {"toolUse": {"toolUseId": f"t{i}", "name": "lookup", "input": {"q": f"query {i}", "n": i}}}
        result = {"toolResult": {"toolUseId": f"t{i}", "content": [{"text": f"result {i} " * 20}]}}
        messages += [
            {"role": "assistant", "content": [{"text": f"calling {i}"}, use]},
            {"role": "user", "content": [result]},
        ]
    return messages


def test_a_memoised_fingerprint_is_the_stable_hash_of_role_and_content() -> None:
    content = [{"text": "hello"}, {"toolUse": {"toolUseId": "a", "name": "f", "input": {"x": 1.5, "y": None}}}]
    want = stable_hash({"role": "assistant", "content": content}, 16)
    assert message_fingerprint("assistant", content) == want
    assert message_fingerprint("assistant", copy.deepcopy(content)) == want  # the memo's answer
    assert message_fingerprint("user", content) == stable_hash({"role": "user", "content": content}, 16)
    nan = [{"toolUse": {"toolUseId": "a", "name": "f", "input": {"x": float("nan")}}}]
    none = [{"toolUse": {"toolUseId": "a", "name": "f", "input": {"x": None}}}]
    assert message_fingerprint("user", nan) != message_fingerprint("user", none)


def test_the_fingerprint_memo_stays_within_its_entries(monkeypatch: Any) -> None:
    monkeypatch.setattr(fingerprints, "MEMO_ENTRIES", 8)
    monkeypatch.setattr(fingerprints, "_memo", {})
    for i in range(50):
        message_fingerprint("user", [{"text": f"text {i}"}])
    assert 0 < len(fingerprints._memo) <= 8
    long = [{"text": "x" * (fingerprints.MEMO_MAX_JSON_BYTES + 1)}]
    assert message_fingerprint("user", long) == stable_hash({"role": "user", "content": long}, 16)
    assert all(len(key) <= fingerprints.MEMO_MAX_JSON_BYTES for key in fingerprints._memo)


def test_a_placement_built_by_the_strategies_equals_the_dataclass_one() -> None:
    fast = CachePointPlacement._message(3, 120, "abc")
    slow = CachePointPlacement(3, "message", 120, "abc")
    assert (fast, hash(fast), repr(fast), fast.to_dict()) == (slow, hash(slow), repr(slow), slow.to_dict())
    assert pickle.loads(pickle.dumps(fast)) == slow and dataclasses.asdict(fast) == dataclasses.asdict(slow)


def test_direct_range_sums_equal_the_running_sums() -> None:
    messages = _agent(41)
    strategy = AnchoredTailStrategy(CacheStrategyConfig(CLAUDE, SYSTEM, messages))
    counts = [default_count_tokens(m) for m in messages]
    ranges = [(0, 40), (3, 7), (10, 10), (5, 4), (0, 0), (20, 39)] * 3  # past the direct sums, then running sums
    assert [strategy.tokens_between(a, b) for a, b in ranges] == [sum(counts[a : b + 1]) for a, b in ranges]
    assert strategy._prefix is not None


@dataclasses.dataclass
class _Args:
    q: str


def test_a_dataclass_in_a_message_is_counted_whole_each_time() -> None:
    messages = _agent(9)
    messages[3]["content"][1]["toolUse"]["input"] = {"q": _Args("x")}
    first = place_cache_points(CLAUDE, SYSTEM, messages, strategy=AnchoredTailStrategy)
    assert first.counted is None
    again = place_cache_points(
        CLAUDE, SYSTEM, messages, previous_placements=first.placements, strategy=MultiPointStrategy
    )
    assert again.counted is None


def test_a_text_block_allows_a_point_unless_it_is_blank() -> None:
    messages = [
        {"role": "user", "content": [{"text": "hi"}]},
        {"role": "assistant", "content": [{"text": "  \n"}]},
        {"role": "user", "content": [{"text": "hi", "type": "text"}]},
        {"role": "assistant", "content": [{"text": ""}, {"cachePoint": {"type": "default"}}]},
    ]
    for info in (CLAUDE, NOVA):
        strategy = AnchoredTailStrategy(CacheStrategyConfig(info, SYSTEM, messages))
        assert [strategy.point_allowed_after(i) for i in range(4)] == [True, False, True, False]
