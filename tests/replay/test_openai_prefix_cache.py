"""OpenAI's automatic prompt caching in the simulator: the 1,024-token minimum, 128-token increments, the
``prompt_cache_key`` namespace, the cached-input price, and the same traffic priced on Bedrock and the Anthropic
API for comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._pricing import price_for
from promptcache.replay._engine import run_replay
from promptcache.replay._model_table import ModelTable
from promptcache.replay._openai_cache import OpenAIPrefixCache, cached_tokens, openai_request_cost
from promptcache.replay._simulator import Checkpoint, PromptCacheSimulator
from promptcache.replay._simulators import make_simulator


def blocks(tokens: list[int], tag: str = "a") -> tuple[list[int], list[bytes]]:
    cum, hashes = [0], [b""]
    for i, n in enumerate(tokens, start=1):
        cum.append(cum[-1] + n)
        hashes.append(f"{tag}:{i}".encode())
    return cum, hashes


def cache(model: str = "gpt-4o") -> OpenAIPrefixCache:
    simulator = make_simulator(ModelTable().rules(model), price_for(model))
    assert isinstance(simulator, OpenAIPrefixCache)
    return simulator


@pytest.mark.parametrize(
    ("matched", "cached"), [(0, 0), (1023, 0), (1024, 1024), (1151, 1024), (1152, 1152), (5000, 4992)]
)
def test_hits_start_at_1024_tokens_and_grow_by_128(matched: int, cached: int) -> None:
    assert cached_tokens(matched) == cached


def test_a_repeated_prefix_is_read_without_cache_points_and_without_a_write_charge() -> None:
    s = cache()
    cum, hashes = blocks([1500, 300])
    first = s.simulate(cum, hashes, 1, [], 0.0)
    assert (first.input_tokens, first.read_tokens, first.write_tokens) == (1500, 0, 0)
    assert first.cost_usd == pytest.approx(1500 * 2.50 / 1e6)  # gpt-4o: $2.50 input, no write premium
    second = s.simulate(cum, hashes, 2, [Checkpoint(1)], 10.0)  # cache points are ignored
    assert (second.read_tokens, second.input_tokens) == (1408, 392)  # 1,500 matched -> 1,024 + 3 x 128
    assert second.cost_usd == pytest.approx((392 * 2.50 + 1408 * 1.25) / 1e6)  # cached input $1.25


def test_prompts_under_the_minimum_are_never_cached() -> None:
    s = cache()
    cum, hashes = blocks([1000])
    s.simulate(cum, hashes, 1, [], 0.0)
    assert s.simulate(cum, hashes, 1, [], 1.0).read_tokens == 0
    assert s.live_entries(1.0) == 0


def test_prefixes_expire_five_minutes_after_their_last_use() -> None:
    s = cache()
    cum, hashes = blocks([2048])
    s.simulate(cum, hashes, 1, [], 0.0)
    assert s.simulate(cum, hashes, 1, [], 299.0).read_tokens == 2048
    assert s.simulate(cum, hashes, 1, [], 598.0).read_tokens == 2048  # refreshed at 299 s
    assert s.simulate(cum, hashes, 1, [], 899.0).read_tokens == 0


def test_prompt_cache_key_separates_namespaces() -> None:
    s = cache()
    cum, hashes = blocks([3000])
    s.simulate(cum, hashes, 1, [], 0.0, cache_key="user-1")
    assert s.simulate(cum, hashes, 1, [], 1.0, cache_key="user-2").read_tokens == 0
    assert s.simulate(cum, hashes, 1, [], 2.0, cache_key="user-1").read_tokens == 2944
    assert s.simulate(cum, hashes, 1, [], 3.0).read_tokens == 0  # no key: its own namespace


def test_request_cost_from_logged_usage() -> None:
    # gpt-4.1: $2.00 input, $0.50 cached, $8.00 output per 1M
    assert openai_request_cost(10_000, 8_064, 500, price_for("gpt-4.1")) == pytest.approx(
        (1_936 * 2.0 + 8_064 * 0.5 + 500 * 8.0) / 1e6
    )
    with pytest.raises(ValueError, match="cached <= prompt"):
        openai_request_cost(100, 200, 0, price_for("gpt-4.1"))


def test_other_models_keep_the_cache_point_simulator() -> None:
    rules = ModelTable().rules("claude-sonnet-4-5")
    assert isinstance(make_simulator(rules, price_for("claude-sonnet-4-5")), PromptCacheSimulator)
    assert ModelTable().rules("gpt-4o").family == "openai" and ModelTable().rules("gpt-4o").min_tokens == 1024


def _openai_log(path: Path) -> Path:
    """Three turns of one OpenAI chat: a 6,000-character system prompt, every reply logged with its model."""
    system = {"role": "system", "content": "You are the airline desk. " * 240}
    messages: list[dict[str, object]] = [system]
    for turn in range(3):
        messages.append({"role": "user", "content": f"question {turn} " + "about my booking " * 40})
        messages.append({"role": "assistant", "content": "answer " * 30, "model": "gpt-4o-2024-08-06"})
    path.write_text(json.dumps([{"id": "chat-1", "messages": messages}]))
    return path


def test_an_openai_log_is_priced_under_openai_rules_and_compared_with_claude(tmp_path: Path) -> None:
    path = _openai_log(tmp_path / "chat.json")
    on_openai = run_replay([path], "gpt-4o", ["none", "last-message"], combined=False)
    none, cached = on_openai.strategies["none"], on_openai.strategies["last-message"]
    # automatic caching: every strategy reads the same; even "none" reads (OpenAI caches without being asked)
    assert cached.read_tokens == none.read_tokens > 0 and cached.write_tokens == 0
    assert on_openai.price.provider == "openai"
    # the same traffic moved: Claude on the Anthropic API and on Bedrock (global endpoint) bill differently
    moved = run_replay([path], "claude-sonnet-4-5", ["none", "last-message"], combined=False, force_model=True)
    bedrock = run_replay(
        [path], "global.anthropic.claude-sonnet-4-5-20250929-v1:0", ["none", "last-message"], combined=False,
        force_model=True,
    )  # fmt: skip
    assert moved.strategies["none"].read_tokens == 0 and moved.strategies["last-message"].write_tokens > 0
    assert moved.strategies["last-message"].cost_usd == pytest.approx(bedrock.strategies["last-message"].cost_usd)


def test_an_openai_log_with_usage_gives_a_fair_as_logged_row(tmp_path: Path) -> None:
    """Logged OpenAI usage (``prompt_tokens`` with ``cached_tokens``) that follows OpenAI's rules is reproduced by
    the as-logged row: each turn reads the previous prompt, rounded down to 1,024 + 128 k tokens."""
    system = {"role": "system", "content": "You are the airline desk. " * 240}
    messages: list[dict[str, object]] = [system]
    prompts = [2_006, 2_410, 2_930]
    for turn, prompt in enumerate(prompts):
        cached = cached_tokens(prompts[turn - 1]) if turn else 0
        messages.append({"role": "user", "content": f"question {turn} " + "about my booking " * 40})
        usage = {"prompt_tokens": prompt, "completion_tokens": 40, "prompt_tokens_details": {"cached_tokens": cached}}
        messages.append({"role": "assistant", "content": "answer " * 30, "model": "gpt-4.1", "usage": usage})
    path = tmp_path / "logged.json"
    path.write_text(json.dumps([{"id": "chat-2", "messages": messages}]))
    result = run_replay([path], "gpt-4.1", ["none"], combined=False)
    assert result.logged is not None and result.fidelity is not None and result.as_logged_source == "logged"
    assert result.logged.read_tokens == 1_920 + 2_304 == result.strategies["as-logged"].read_tokens
    assert result.fidelity.cost_difference == pytest.approx(0.0, abs=1e-12)
    # gpt-4.1: $2.00 input, $0.50 cached input per 1M
    assert result.logged.cost_usd == pytest.approx(((2_006 + 490 + 626) * 2.0 + 4_224 * 0.5) / 1e6)
