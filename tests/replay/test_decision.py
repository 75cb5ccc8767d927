"""The decision the report opens with: keep / switch / set-ttl / disable, its monthly saving and band, and
``best_strategy`` agreeing with it (real Claude Code sessions and tau-bench when the shared data is present)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from shared_data import find_data_file  # noqa: E402

from promptcache._cli import main  # noqa: E402
from promptcache.replay._decision import ESTIMATE_ERROR, MONTH_S, decide  # noqa: E402
from promptcache.replay._engine import DEFAULT_STRATEGIES, run_replay  # noqa: E402
from promptcache.replay._report_json import to_json  # noqa: E402

MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"
SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "sample_conversations.json"


def _data(name: str) -> Path:
    path = find_data_file(name, required=False)
    if path is None:
        pytest.skip(f"shared data {name} not present")
    return path


@pytest.fixture(scope="module")
def tau10():
    return run_replay([_data("tau_bench_gpt-4o-airline.json")], MODEL, DEFAULT_STRATEGIES)


def test_claude_code_session_whose_layout_is_cheapest_keeps_it() -> None:
    session = _data("claude_code_ext/m-claude/abc757d1-3da3-42fb-bb7b-ffa293a4ba29.jsonl")
    result = run_replay([session], MODEL, DEFAULT_STRATEGIES)
    as_logged = result.strategies["as-logged"].cost_usd
    cheapest = min(result.strategies[n].logged_cost_usd for n in ("langchain-aws", "anchored-tail", "multi-point"))
    # the log's own layout is the cheapest to within the simulator's own error on this log (its 5 tail tokens sent
    # uncached cost $0.00001 more than anchored-tail's; the fidelity figure is far wider)
    fidelity = result.fidelity
    assert fidelity is not None and fidelity.cost_difference is not None
    assert as_logged - cheapest < abs(fidelity.cost_difference) * as_logged
    report = to_json(result)
    decision = report["decision"]
    assert (decision["action"], decision["strategy"], report["best_strategy"]) == ("keep", "as-logged", "as-logged")
    assert decision["monthly_savings_usd"] == 0.0 and report["span_s"] == round(result.span_s, 3) > 0
    assert decision["sentence"].startswith("Keep what you have: Claude Code places its own cache points")


def test_claude_code_advice_names_what_the_user_can_change() -> None:
    folder = _data("claude_code/258c7280-ae70-4798-800f-63464d01a85d")
    result = run_replay([folder], MODEL, DEFAULT_STRATEGIES)
    decision = decide(result)
    assert decision is not None and decision.action == "keep"  # anchored-tail is cheaper, but not installable here
    changed = result.miss_causes["as-logged"]["prefix-changed"]
    monthly = changed.cost_usd * MONTH_S / result.span_s
    assert (
        f"Compaction and prefix changes ({changed.events}) re-wrote {changed.cache_write_tokens:,} tokens: "
        in (decision.advice[0])
    )
    assert decision.advice[0].endswith(
        f"${monthly:,.2f} per month, from 70 minutes of traffic (what they cost, not a saving: they are Claude Code's own changes, which nothing "
        "you control is known to recover)."
    )


def test_tau_bench_at_400_s_keeps_leave_caching_off() -> None:
    result = run_replay([_data("tau_bench_gpt-4o-airline.json")], MODEL, DEFAULT_STRATEGIES, gap_s=400.0)
    decision = decide(result)
    assert decision is not None
    assert (decision.action, decision.strategy, result.best()) == ("disable", "none", "none")
    assert decision.sentence.startswith("Leave caching off for such traffic or use a model that offers the 1-hour TTL")
    assert decision.monthly_savings_usd == 0.0


def test_monthly_savings_follow_from_the_span_and_the_table(tau10) -> None:
    decision = decide(tau10)
    assert decision is not None and (decision.action, decision.strategy) == ("switch", "anchored-tail")
    none, ours = tau10.strategies["none"].cost_usd, tau10.strategies["anchored-tail"].cost_usd
    expected = (none - ours) / tau10.span_s * 30 * 86_400
    assert decision.monthly_savings_usd == pytest.approx(expected, rel=0.01)
    assert tau10.span_s == pytest.approx(10.0 * (tau10.requests - 1))  # untimed: 10 s apart, one after another
    # every size estimated with the Claude calibration: the band is its ±7%
    assert decision.band_usd == pytest.approx(decision.monthly_savings_usd * ESTIMATE_ERROR["claude"])
    assert f"saving ${expected:,.2f} (±${expected * 0.07:,.2f}, token sizes estimated) per month" in decision.sentence


def test_monthly_requests_sets_the_volume(tau10) -> None:
    tau10.monthly_requests = 1_000_000
    try:
        decision = decide(tau10)
        none, ours = tau10.strategies["none"].cost_usd, tau10.strategies["anchored-tail"].cost_usd
        assert decision is not None
        assert decision.monthly_savings_usd == pytest.approx((none - ours) / tau10.requests * 1_000_000)
        assert "at 1,000,000 requests per month" in decision.sentence
    finally:
        tau10.monthly_requests = None


def test_one_hour_ttl_is_the_decision_where_it_pays(tmp_path: Path) -> None:
    out = tmp_path / "o"
    argv = ["replay", str(SAMPLE), "--gap-s", "600", "--model", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"]
    assert main([*argv, "--out", str(out), "--no-chart"]) == 0
    report = json.loads((out / "replay.json").read_text())
    decision = report["decision"]
    assert (decision["action"], decision["strategy"], decision["ttl"]) == ("set-ttl", "anchored-tail", "1h")
    assert report["best_strategy"] == "anchored-tail"
    saved = report["strategies"]["none"]["cost_usd"] - report["variants"]["anchored-tail@1h"]["cost_usd"]
    assert decision["savings_usd"] == pytest.approx(saved, abs=1e-6)


def test_hindsight_alone_recommends_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["replay", str(SAMPLE), "--strategy", "hindsight", "--out", str(tmp_path), "--no-chart"]
    assert main(argv) == 0
    report = json.loads((tmp_path / "replay.json").read_text())
    assert report["best_strategy"] is None and report["decision"] is None
    assert capsys.readouterr().out.startswith("No recommendation: the run compared no placement")


def test_monthly_requests_must_be_positive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(SAMPLE), "--monthly-requests", "0", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == "promptcache: error: --monthly-requests must be an integer > 0, got 0\n"


def test_a_one_request_claude_code_session_keeps_its_layout_without_a_traceback(tmp_path: Path) -> None:
    # one request: its cache write is never read, so no caching would be cheaper; but Claude Code places its own
    # points, so the decision is still "keep" (and the report is written, not a KeyError)
    session = _data("claude_code/short.jsonl")
    assert main(["replay", str(session), "--no-chart", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "replay.json").read_text())
    decision = report["decision"]
    assert (decision["action"], decision["strategy"], report["best_strategy"]) == ("keep", "as-logged", "as-logged")
    assert decision["sentence"].startswith("Keep what you have: Claude Code places its own cache points (113.7% of")


def test_a_cheaper_placement_within_the_fidelity_error_says_so() -> None:
    # m-claude's whole account: a placement a fraction of a percent cheaper than the log's own layout, where the
    # simulator's own error on the log is larger; the advice line must not read as a finding
    result = run_replay([_data("claude_code_ext/m-claude")], MODEL, DEFAULT_STRATEGIES)
    decision = decide(result)
    assert decision is not None and decision.action == "keep"
    fidelity = result.fidelity
    assert fidelity is not None and fidelity.cost_difference is not None
    line = next(a for a in decision.advice if a.startswith("For agents of your own"))
    assert line == (
        "For agents of your own, anchored-tail would cost 0.2% less than Claude Code's layout on this traffic "
        f"(within the simulator's own error on this log, ±{abs(fidelity.cost_difference):.1%})."
    )
    assert f"{abs(fidelity.cost_difference):.1%}" == "0.3%"
