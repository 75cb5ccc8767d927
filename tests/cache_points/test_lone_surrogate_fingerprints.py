"""A lone surrogate (U+D800..U+DFFF) in a message -- which botocore sends, escaped -- is fingerprinted and placed
instead of crashing orjson: `canonical_json` writes such a str as ``{"$surrogates": <its json.dumps>}``.

Valid text keeps the bytes it always had (the fast orjson path), so no existing key or fingerprint changes.
"""

from __future__ import annotations

import json

import orjson

from promptcache._keys import canonical_json, stable_hash
from promptcache.cache_points import AnchoredTailStrategy, get_model_info
from promptcache.cache_points._converse import place_cache_points
from promptcache.cache_points._strategy import CacheStrategyConfig

CLAUDE = "anthropic.claude-sonnet-4-20250514-v1:0"


def test_a_lone_surrogate_is_written_escaped_and_apart_from_its_escape_text() -> None:
    assert canonical_json({"t": "a\ud800b"}) == b'{"t":{"$surrogates":"\\"a\\\\ud800b\\""}}'
    assert canonical_json({"t": "a\ud800b"}) != canonical_json({"t": "a\\ud800b"})  # a literal backslash-u text
    assert canonical_json({"t": "a\ud800b"}) != canonical_json({"t": "a\udc00b"})
    assert canonical_json({"k\udfff": 1}) == b'{"{\\"$surrogates\\":\\"\\\\\\"k\\\\\\\\udfff\\\\\\"\\"}":1}'
    assert canonical_json(["\U0001f600", "\ud83d"]) == b'["\xf0\x9f\x98\x80",{"$surrogates":"\\"\\\\ud83d\\""}]'
    assert json.loads(canonical_json({"t": "x\ud800"}))["t"]["$surrogates"] == json.dumps("x\ud800")


def test_valid_text_keeps_its_canonical_bytes() -> None:
    value = {"role": "user", "content": [{"text": "caf\u00e9 \U0001f600"}], "n": 2**70}
    plain = {"role": "user", "content": [{"text": "caf\u00e9 \U0001f600"}]}
    assert canonical_json(plain) == orjson.dumps(plain, option=orjson.OPT_SORT_KEYS)
    assert canonical_json(value) == orjson.dumps({**plain, "n": {"$int": str(2**70)}}, option=orjson.OPT_SORT_KEYS)


def test_a_message_with_a_lone_surrogate_is_fingerprinted_and_placed() -> None:
    info = get_model_info(CLAUDE, min_tokens_per_cache_point=20)
    messages = [
        {"role": "user", "content": [{"text": "lone \ud800 " + "w " * 40}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "c", "name": "f", "input": {"q": "\udfff"}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "c", "content": [{"text": "r \ud800 " * 30}]}}]},
    ]
    strategy = AnchoredTailStrategy(CacheStrategyConfig(model_info=info, system_prompt=None, messages=messages))
    escaped = [{"text": {"$surrogates": json.dumps(messages[0]["content"][0]["text"])}}]
    assert strategy.fingerprint(0) == stable_hash({"role": "user", "content": escaped}, 16)
    plan = place_cache_points(info, [], messages, None)
    assert [p.index for p in plan.placements] == [2]
    again = place_cache_points(info, [], messages, None, previous_placements=plan.placements)
    assert again.placements == plan.placements
    assert [p.fingerprint for p in again.placements] == [p.fingerprint for p in plan.placements]
