"""A log's rate is extrapolated to a month only over a span of at least an hour (``MIN_SPAN_S``, the longest cache
lifetime): a burst of a few seconds gives the saving over the log and asks for ``--monthly-requests N``."""

from __future__ import annotations

import json
from pathlib import Path

from promptcache.replay._decision import MIN_SPAN_S, MONTH_S, decide
from promptcache.replay._engine import DEFAULT_STRATEGIES, run_replay
from promptcache.replay._report_json import to_json

SONNET4 = "anthropic.claude-sonnet-4-20250514-v1:0"


def _log(path: Path, step_s: float) -> Path:
    """Four timed calls ``step_s`` apart on a long system prompt, naming their model."""
    messages: list[dict] = [{"role": "system", "content": "policy " * 1500}]
    for i in range(4):
        messages += [{"role": "user", "content": f"question {i}", "timestamp": step_s * i},
                     {"role": "assistant", "content": "ok", "model": SONNET4, "timestamp": step_s * i + 1}]  # fmt: skip
    path.write_text(json.dumps(messages))
    return path


def test_a_few_seconds_give_no_monthly_figure(tmp_path: Path) -> None:
    result = run_replay([_log(tmp_path / "burst.json", 2.0)], SONNET4, DEFAULT_STRATEGIES)
    assert 0 < result.span_s < MIN_SPAN_S == 3600.0
    decision = to_json(result)["decision"]
    assert (decision["rate_source"], decision["monthly_savings_usd"], decision["band_usd"]) == (
        "span-too-short",
        None,
        None,
    )
    assert decision["basis"] == (
        f"its 4 requests span {result.span_s:.0f} seconds, under the hour a monthly figure needs; pass "
        "--monthly-requests N for your volume"
    )
    assert f"over this log ({decision['basis']})" in decision["sentence"]


def test_an_hour_is_extrapolated_from_the_span(tmp_path: Path) -> None:
    result = run_replay([_log(tmp_path / "hour.json", 1200.0)], SONNET4, DEFAULT_STRATEGIES)
    assert result.span_s >= MIN_SPAN_S
    decision = decide(result)
    assert decision is not None and decision.rate_source == "log-span"
    assert decision.monthly_savings_usd == decision.savings_usd * MONTH_S / result.span_s


def test_a_volume_overrides_a_short_span(tmp_path: Path) -> None:
    result = run_replay([_log(tmp_path / "burst.json", 2.0)], SONNET4, DEFAULT_STRATEGIES)
    result.monthly_requests = 1_000
    decision = decide(result)
    assert decision is not None and decision.rate_source == "monthly-requests"
    assert decision.monthly_savings_usd == decision.savings_usd * 1_000 / 4


def test_a_short_claude_code_log_gives_its_advice_over_the_log() -> None:
    compact = Path(__file__).resolve().parents[1] / "data" / "claude_code" / "compact.jsonl"
    result = run_replay([compact], SONNET4, DEFAULT_STRATEGIES)
    decision = decide(result)
    assert decision is not None and (decision.action, decision.rate_source) == ("keep", "span-too-short")
    assert decision.advice[0].startswith("Compaction and prefix changes (1) re-wrote 303 tokens: $0.0030 over this log")
    assert decision.advice[-1] == (
        f"Figures are over this log: its 4 requests span {result.span_s:.0f} seconds, under the hour a monthly figure "
        "needs; pass --monthly-requests N for your volume."
    )
