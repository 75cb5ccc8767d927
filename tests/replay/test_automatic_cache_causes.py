"""Miss causes on a model with automatic prefix caching (OpenAI): no cache points, so no ``no-cache-point``,
``cache-point-limit`` or ``lookback``; what was not read is new content, under the minimum, beyond the last 128-token
step of a hit, or expired during an idle gap; and the decision sentence says when nothing reaches the minimum."""

from __future__ import annotations

import json
from pathlib import Path

from promptcache.replay._decision import cause_rows, decide
from promptcache.replay._engine import DEFAULT_STRATEGIES, ReplayResult, run_replay

GPT4O = "gpt-4o"
CALL_LOGS = Path(__file__).resolve().parents[1] / "data" / "call_logs"


def _log(path: Path, times: list[float], system_words: int = 1500) -> Path:
    messages: list[dict] = [{"role": "system", "content": "policy " * system_words}]
    for i, t in enumerate(times):
        messages += [{"role": "user", "content": f"question {i} " * 30, "timestamp": t},
                     {"role": "assistant", "content": "answer " * 20, "model": GPT4O, "timestamp": t + 1}]  # fmt: skip
    path.write_text(json.dumps(messages))
    return path


def _rows(result: ReplayResult, name: str) -> dict[str, dict]:
    return {row["cause"]: row for row in cause_rows(result, name)}


def _every_row_explained(result: ReplayResult) -> None:
    for name, row in result.strategies.items():
        if row.unavailable or name not in result.miss_causes:
            continue
        causes = result.miss_causes[name]
        assert not {"no-cache-point", "cache-point-limit", "lookback", "unexplained"} & set(causes), name
        assert sum(c.uncached_tokens for c in causes.values()) == row.input_tokens
        assert sum(c.cache_write_tokens for c in causes.values()) == row.write_tokens == 0


def test_an_idle_gap_past_the_lifetime_is_ttl_expired(tmp_path: Path) -> None:
    result = run_replay([_log(tmp_path / "idle.json", [0.0, 30.0, 30.0 + 600])], GPT4O, DEFAULT_STRATEGIES)
    _every_row_explained(result)
    rows = _rows(result, "none")
    expired = rows["ttl-expired"]
    assert expired["requests"] == 1 and expired["median_gap_s"] == 600.0  # since the prefix was last sent
    assert expired["uncached_tokens"] > 1500
    assert expired["recoverable_usd"] is None and expired["fix"].startswith("send related requests within 5 minutes")
    assert rows["first-call"]["recoverable_usd"] == 0.0
    assert rows["hit-increment"]["recoverable_usd"] == 0.0 and rows["hit-increment"]["uncached_tokens"] < 128 * 3


def test_a_short_prompt_is_below_the_minimum(tmp_path: Path) -> None:
    result = run_replay([_log(tmp_path / "short.json", [0.0, 30.0], system_words=10)], GPT4O, DEFAULT_STRATEGIES)
    _every_row_explained(result)
    rows = _rows(result, "none")
    assert list(rows) == ["below-minimum"]
    assert rows["below-minimum"]["uncached_tokens"] == result.input_tokens
    assert rows["below-minimum"]["fix"] == "none: under the model's minimum (1,024 tokens)"
    assert rows["below-minimum"]["recoverable_usd"] == 0.0
    decision = decide(result)
    assert decision is not None and decision.action == "keep"
    assert decision.sentence.startswith(
        f"Keep what you have: nothing here reaches the 1,024 tokens OpenAI caches from (the largest request has "
        f"{result.largest_request_tokens:,} tokens), so OpenAI's automatic cache reads nothing"
    )


def test_the_proxy_log_names_no_cache_point_cause() -> None:
    result = run_replay(
        [CALL_LOGS / "openai_proxy.jsonl"],
        GPT4O,
        DEFAULT_STRATEGIES,
    )
    _every_row_explained(result)


def test_a_model_switch_is_named_and_not_priced(tmp_path: Path) -> None:
    messages: list[dict] = [{"role": "system", "content": "policy " * 1500}]
    for i, model in enumerate([GPT4O, "gpt-4o-mini", GPT4O]):
        messages += [{"role": "user", "content": f"question {i} " * 30, "timestamp": 20 * i},
                     {"role": "assistant", "content": "answer " * 20, "model": model, "timestamp": 20 * i + 1}]  # fmt: skip
    path = tmp_path / "switch.json"
    path.write_text(json.dumps(messages))
    result = run_replay([path], GPT4O, DEFAULT_STRATEGIES)
    _every_row_explained(result)
    switched = _rows(result, "none")["model-switch"]
    assert switched["requests"] == 2 and switched["uncached_tokens"] > 0  # to the mini model and back
    assert (switched["recoverable_usd"], switched["fix"]) == (
        None,
        "stay on one model within a conversation (models do not share a cache)",
    )
