"""Token counting stays cheap on long histories and long texts, and a request is walked once.

- the memo never holds more than ``MEMO_ENTRIES`` counts and keeps the newest when full (no thrashing: a text
  counted last turn is a hit, however long the history);
- a text over ``LONG_TEXT_CHARS`` is estimated from a few short windows, never encoded whole;
- ``place_cache_points`` visits each message once (shapes, points and the default counter's counts in one walk),
  and its counts equal ``default_count_tokens`` message by message."""

from __future__ import annotations

import random

import pytest

import promptcache.cache_points._request_scan as scan_module
import promptcache.cache_points._tokens as tokens
from promptcache.cache_points import AnchoredTailStrategy, CacheStrategyConfig, default_count_tokens, get_model_info
from promptcache.cache_points._converse import place_cache_points

CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"


@pytest.fixture
def encodes(monkeypatch):
    """The texts handed to the BPE encoder."""
    seen: list[str] = []
    original = tokens._encode_count

    def spy(text: str) -> int:
        seen.append(text)
        return original(text)

    monkeypatch.setattr(tokens, "_encode_count", spy)
    tokens.clear_token_memo()
    yield seen
    tokens.clear_token_memo()


def test_the_memo_is_bounded_and_keeps_the_newest(encodes, monkeypatch):
    monkeypatch.setattr(tokens, "MEMO_ENTRIES", 8)
    texts = [f"text number {i} with a few words" for i in range(20)]
    counts = [tokens.count_text_tokens(t) for t in texts]
    assert len(encodes) == 20 and len(tokens._memo) <= 8
    encodes.clear()
    assert [tokens.count_text_tokens(t) for t in texts[-4:]] == counts[-4:]
    assert encodes == []  # the newest are hits
    assert tokens.count_text_tokens(texts[0]) == counts[0]
    assert encodes == [texts[0]]  # an evicted one is counted again, with the same value


def test_a_long_text_is_estimated_from_short_windows(encodes):
    rng = random.Random(11)
    text = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=2_000_000))  # no whitespace at all
    estimate = tokens.count_text_tokens(text)
    assert len(encodes) == tokens.SAMPLE_WINDOWS
    assert all(len(w) <= tokens.SAMPLE_CHARS for w in encodes)
    assert estimate == 1_270_996
    assert tokens.count_text_tokens(text) == estimate and len(encodes) == tokens.SAMPLE_WINDOWS  # memoised


def test_the_estimate_of_long_prose_is_close_to_the_full_count(encodes):
    rng = random.Random(12)
    words = "the cache point goes before the document so the request stays valid and cheap".split()
    text = " ".join(rng.choices(words, k=4_000))  # ~20,000 chars, above LONG_TEXT_CHARS
    assert len(text) > tokens.LONG_TEXT_CHARS
    exact = tokens._encode_count(text)
    estimate = tokens.count_text_tokens(text)
    assert abs(estimate - exact) / exact < 0.05
    assert tokens.count_text_tokens("short text") == 2  # short texts are encoded as they are


def _request(n: int) -> list[dict]:
    messages = [{"role": "user", "content": [{"text": "question zero"}]}]
    for i in range(1, n):
        if i % 2:
            use = {"toolUse": {"toolUseId": f"t{i}", "name": "lookup", "input": {"q": f"query {i}"}}}
            messages.append({"role": "assistant", "content": [{"text": f"calling {i}"}, use]})
        else:
            result = {"toolResult": {"toolUseId": f"t{i - 1}", "content": [{"text": f"result {i} " * 20}]}}
            messages.append({"role": "user", "content": [result]})
    return messages


def test_place_cache_points_walks_each_message_once_and_counts_as_the_default_counter(monkeypatch):
    messages = _request(41)
    visits: list[int] = []
    original = scan_module._quick

    def spy(content, counting):
        visits.append(id(content))
        return original(content, counting)

    monkeypatch.setattr(scan_module, "_quick", spy)
    calls: list[object] = []
    original_count = tokens.default_count_tokens
    monkeypatch.setattr(
        "promptcache.cache_points._strategy.default_count_tokens",
        lambda m: calls.append(m) or original_count(m),
    )
    info = get_model_info(CLAUDE, min_tokens_per_cache_point=50)
    plan = place_cache_points(info, [{"text": "sys"}], messages, strategy=AnchoredTailStrategy)
    # one visit per message content (a tool result's content is visited from inside its message)
    top = [v for v in visits if v in {id(m["content"]) for m in messages}]
    assert len(top) == len(messages) and len(set(top)) == len(messages)
    # the strategy took the walk's counts: only the system prompt is counted apart, no message twice
    assert calls == [{"role": "system", "content": [{"text": "sys"}]}]
    expected = [default_count_tokens(m) for m in messages]
    direct = AnchoredTailStrategy(CacheStrategyConfig(info, [{"text": "sys"}], messages))
    assert direct.message_tokens == expected
    assert [p.tokens_covered for p in plan.placements] == [
        p.tokens_covered for p in direct.determine_optimal_cache_points().placements
    ]
