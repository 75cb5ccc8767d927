"""Where the decision's inputs come from, said in the report and the JSON: the monthly rate (the log's span, an
assumed gap between untimed calls, or ``--monthly-requests``), the model (named by the log, assumed, forced), and
on OpenAI logs, where every row reads the cache, the comparison with the no-cache counterfactual."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import DEFAULT_MODEL, main
from promptcache.replay._engine import DEFAULT_STRATEGIES, run_replay
from promptcache.replay._report_json import to_json

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "data" / "sample_conversations.json"  # no timestamps, no model field
CALL_LOGS = ROOT / "tests" / "data" / "call_logs"
SONNET4 = "anthropic.claude-sonnet-4-20250514-v1:0"


def _replay(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "out"
    assert main(["replay", *args, "--out", str(out), "--no-chart"]) == 0
    return json.loads((out / "replay.json").read_text())


def _timed(path: Path) -> Path:
    """A timestamped conversation (one request every 20 minutes, an hour in all) naming its model."""
    messages: list[dict] = [{"role": "system", "content": "policy " * 1500}]
    for i in range(4):
        messages += [{"role": "user", "content": f"question {i}", "timestamp": 1200 * i},
                     {"role": "assistant", "content": "ok", "model": SONNET4, "timestamp": 1200 * i + 1}]  # fmt: skip
    path.write_text(json.dumps(messages))
    return path


def test_untimed_calls_give_a_monthly_figure_at_an_assumed_gap(tmp_path: Path) -> None:
    report = _replay(tmp_path, str(SAMPLE), "--gap-s", "90")  # 41 gaps of 90 s: over the hour a month needs
    decision = report["decision"]
    assert decision["rate_source"] == "assumed-gap" and decision["monthly_savings_usd"] > 0
    # 30 days over 41 gaps of 90 s (3,690 s): x702.4
    assert decision["basis"] == (
        f"at an assumed 90 s between calls ({report['requests']:,} requests carry no timestamps; so spaced the "
        "log spans 62 minutes; a month at that rate = x702.4; pass --monthly-requests N for your volume)"
    )
    assert decision["sentence"].endswith(
        f"per month {decision['basis']}. (Priced as {DEFAULT_MODEL}: the log names no model; --model sets the one "
        "that served it.)"
    )


def test_timed_calls_use_the_log_span_and_a_volume_overrides_both(tmp_path: Path) -> None:
    timed = _timed(tmp_path / "timed.json")
    result = run_replay([timed], SONNET4, DEFAULT_STRATEGIES)
    assert to_json(result)["decision"]["rate_source"] == "log-span"
    result.monthly_requests = 10_000
    assert to_json(result)["decision"]["rate_source"] == "monthly-requests"
    untimed = run_replay([SAMPLE], SONNET4, DEFAULT_STRATEGIES)
    untimed.monthly_requests = 10_000
    decision = to_json(untimed)["decision"]
    assert decision["rate_source"] == "monthly-requests" and decision["basis"] == "at 10,000 requests per month"


def test_a_log_without_a_model_is_priced_as_the_default_with_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _replay(tmp_path, str(SAMPLE))
    assert (report["model_source"], report["assumed_model_requests"]) == ("assumed", report["requests"])
    warnings = [ln for ln in capsys.readouterr().err.splitlines() if "names no model" in ln]
    assert warnings == [
        f"promptcache: warning: the log names no model for any request: priced and cached as {DEFAULT_MODEL}; "
        "pass --model MODEL_ID to price every call as the model that served it"
    ]


def test_a_named_or_forced_model_is_not_assumed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _replay(tmp_path, str(_timed(tmp_path / "timed.json")))["model_source"] == "log"
    assert _replay(tmp_path, str(SAMPLE), "--model", SONNET4)["model_source"] == "forced"
    assert "names no model" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "read_share", "versus"),
    [("openai_proxy.jsonl", 0.614, 0.372), ("langsmith_runs.json", 0.975, 0.512), ("otel_events.jsonl", 0.0, 1.0)],
)
def test_an_openai_log_keeps_with_an_openai_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, read_share: float, versus: float
) -> None:
    report = _replay(tmp_path, str(CALL_LOGS / name))
    decision = report["decision"]
    assert (decision["action"], decision["ttl"], report["best_strategy"]) == ("keep", None, decision["current"])
    sentence = decision["sentence"]
    assert sentence.startswith(
        "Keep what you have: OpenAI caches prompt prefixes by itself, charges nothing to write them and cannot be "
        f"told not to, so there is no cache point to place and nothing to turn off; here it bills {versus:.1%} of "
        f"the same prompts without caching (a counterfactual, {read_share:.1%} of prompt tokens read from the cache)."
    )
    assert "prompt_cache_key" in sentence and "cache writes" not in sentence and "Leave caching off" not in sentence
    # every row reads the cache, so the comparison is with every prompt token at the input price
    current = report["strategies"][decision["current"]]
    base = report["no_cache_logged_usd"] if decision["current"] == "as-logged" else report["no_cache_usd"]
    assert current["relative_to_no_cache"] == pytest.approx(
        current["cost_usd"] / base, rel=5e-3
    )  # both rounded to 6 digits
    assert current["relative_to_no_cache"] == pytest.approx(versus, abs=5e-4)
    out = capsys.readouterr().out
    assert "vs no cache" in out and "vs none" not in out
    assert "a counterfactual, since OpenAI caches prompt prefixes by itself" in " ".join(out.split())
