"""What a request takes from the previous ones instead of computing it again, and that it is the same value:

- the tool specs' token count, kept with a copy of the specs: a spec changed in place since is counted again, and
  specs JSON has no type for (bytes) are counted every time (written by ``str``);
- a message's fingerprint, taken from the previous request for the messages compared equal to it: the placements and
  their fingerprints are those of a request placed with nothing kept;
- a one-key block's blocker verdict, kept per model family: the verdict of the table's rules.
"""

from __future__ import annotations

from typing import Any

import orjson

from promptcache.cache_points import AnchoredTailStrategy, get_model_info
from promptcache.cache_points._converse import _specs_tokens, place_cache_points
from promptcache.cache_points._rules import blocking_rule, point_blocker
from promptcache.cache_points._tokens import count_text_tokens

CLAUDE = get_model_info("us.anthropic.claude-sonnet-4-20250514-v1:0", min_tokens_per_cache_point=60)
SYSTEM = [{"text": "You are a careful support agent. " * 20}]


def _specs(description: str) -> list[dict[str, Any]]:
    schema = {"json": {"type": "object", "properties": {"q": {"type": "string"}}}}
    return [{"toolSpec": {"name": "lookup", "description": description, "inputSchema": schema}}]


def _json_tokens(specs: object) -> int:
    return count_text_tokens(orjson.dumps(specs, default=str, option=orjson.OPT_SORT_KEYS).decode())


def test_specs_count_follows_a_spec_changed_in_place() -> None:
    specs = _specs("find a booking")
    first = _specs_tokens(specs)
    assert first == _json_tokens(specs)
    assert _specs_tokens(specs) == first
    specs[0]["toolSpec"]["description"] = "find a booking by its reference, the passenger's name or the flight"
    assert _specs_tokens(specs) == _json_tokens(specs) != first


def test_specs_with_bytes_are_counted_from_their_text_every_time() -> None:
    specs = _specs("x")
    specs[0]["toolSpec"]["example"] = b"abcd"
    assert _specs_tokens(specs) == _json_tokens(specs)
    specs[0]["toolSpec"]["example"] = b"wxyz-longer-value-with-more-tokens"
    assert _specs_tokens(specs) == _json_tokens(specs)


def _agent(n: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "question zero"}]}]
    for i in range(1, n, 2):
        use = {"toolUse": {"toolUseId": f"t{i}", "name": "lookup", "input": {"q": f"query {i}"}}}
        result = {"toolResult": {"toolUseId": f"t{i}", "content": [{"text": f"result {i} " * 20}]}}
        messages += [
            {"role": "assistant", "content": [{"text": f"calling {i}"}, use]},
            {"role": "user", "content": [result]},
        ]
    return messages


def test_fingerprints_taken_from_the_previous_request_equal_fresh_ones() -> None:
    messages = _agent(21)
    first = place_cache_points(CLAUDE, SYSTEM, messages[:-2], None, strategy=AnchoredTailStrategy)
    assert first.counted is not None and first.counted.fingerprints
    reused = place_cache_points(
        CLAUDE,
        SYSTEM,
        messages,
        None,
        strategy=AnchoredTailStrategy,
        previous_placements=first.placements,
        previous_counts=first.counted,
    )
    fresh = place_cache_points(
        CLAUDE, SYSTEM, messages, None, strategy=AnchoredTailStrategy, previous_placements=first.placements
    )
    assert [(p.index, p.tokens_covered, p.fingerprint) for p in reused.placements] == [
        (p.index, p.tokens_covered, p.fingerprint) for p in fresh.placements
    ]
    assert reused.placements[-1].index == 20


def test_one_key_block_verdicts_are_the_rules_verdicts() -> None:
    blocks = [
        {"toolUse": {"toolUseId": "t", "name": "n", "input": {}}},
        {"toolResult": {"toolUseId": "t", "content": []}},
        {"image": {"format": "png", "source": {"bytes": b"x"}}},
        {"reasoningContent": {"reasoningText": {"text": "hmm"}}},
        {"document": {"format": "txt", "name": "d", "source": {"bytes": b"x"}}},
        {"type": "thinking"},
    ]
    for family in ("claude", "nova", "other"):
        for block in blocks * 2:  # the second time from the kept verdicts
            found = blocking_rule(block, family)
            assert point_blocker(block, family) == (None if found is None else found[1])
    assert point_blocker(blocks[1], "nova") == "a toolResult block"
    assert point_blocker(blocks[1], "claude") is None
