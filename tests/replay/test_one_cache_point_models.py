"""A model that allows one cache point per request (``max_points: 1`` in ``--models FILE``): every strategy that
reads the limit keeps to it, and langchain-aws, whose placement does not read it, is reported unavailable with the
reason instead of stopping the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import main
from promptcache.replay._prepare import Request
from promptcache.replay._simulator import Checkpoint
from promptcache.replay._strategies import LastMessageStrategy

_LOG = Path(__file__).parents[1] / "data" / "call_logs" / "anthropic_batch.jsonl"
_ONE_POINT_MODEL = {
    "family": "claude",
    "min_tokens": 1024,
    "max_points": 1,
    "ttls": ["5m", "1h"],
    "cachable": ["system", "messages", "tools"],
    "input": 3.0,
    "output": 15.0,
    "cache_write_5m": 3.75,
    "cache_write_1h": 6.0,
    "cache_read": 0.3,
}


def _replay(tmp_path: Path, *strategies: str) -> dict[str, object]:
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"my.one-point": _ONE_POINT_MODEL}))
    flags = [arg for name in strategies for arg in ("--strategy", name)]
    out = tmp_path / "out"
    argv = ["replay", str(_LOG), "--model", "my.one-point", "--models", str(models), *flags, "--out", str(out)]
    assert main([*argv, "--no-chart"]) == 0
    report: dict[str, object] = json.loads((out / "replay.json").read_text())
    return report


def test_langchain_aws_is_unavailable_for_a_one_point_model_and_the_run_goes_on(tmp_path: Path) -> None:
    strategies = _replay(tmp_path)["strategies"]
    assert isinstance(strategies, dict)
    assert strategies["langchain-aws"]["unavailable"] == (
        "langchain-aws places up to 4 cache points per request whatever the model; my.one-point allows 1, "
        "so its requests would be refused"
    )
    assert strategies["last-message"]["unavailable"] is None
    assert strategies["multi-point"]["unavailable"] is None


def test_hindsight_keeps_one_point_the_tail_for_a_one_point_model(tmp_path: Path) -> None:
    strategies = _replay(tmp_path, "hindsight", "last-message")["strategies"]
    assert isinstance(strategies, dict)
    assert strategies["hindsight"]["unavailable"] is None
    assert strategies["hindsight"]["cost_usd"] == strategies["last-message"]["cost_usd"]


_DATA = Path(__file__).parents[1] / "data"
_AS_LOGGED_REASON = "the log's requests hold 2 cache points; my.one-point allows 1"


def _replay_log(tmp_path: Path, log: Path, *strategies: str) -> dict[str, object]:
    tmp_path.mkdir(exist_ok=True)
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"my.one-point": _ONE_POINT_MODEL}))
    flags = [arg for name in strategies for arg in ("--strategy", name)]
    out = tmp_path / "out"
    argv = ["replay", str(log), "--model", "my.one-point", "--models", str(models), *flags, "--out", str(out)]
    assert main([*argv, "--no-chart"]) == 0
    report: dict[str, object] = json.loads((out / "replay.json").read_text())
    return report


def test_as_logged_with_more_points_than_the_forced_model_allows_is_unavailable_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    logs = [
        _DATA / "call_logs" / "langsmith_runs.jsonl",
        _DATA / "claude_code" / "parallel_tools.jsonl",
        _DATA / "call_logs" / "stream_json.jsonl",
        _DATA / "claude_code" / "compact.jsonl",
    ]
    for i, log in enumerate(logs):
        report = _replay_log(tmp_path / str(i), log, "hindsight")
        strategies, variants = report["strategies"], report["variants"]
        assert isinstance(strategies, dict) and isinstance(variants, dict)
        assert strategies["as-logged"]["unavailable"] == _AS_LOGGED_REASON, log.name
        assert variants["as-logged@1h"]["unavailable"] == _AS_LOGGED_REASON, log.name
        assert strategies["hindsight"]["unavailable"] is None
        assert report["as_logged"]["fidelity"] is None


def test_an_unavailable_as_logged_row_is_neither_current_nor_compared_in_the_decision(tmp_path: Path) -> None:
    report = _replay_log(tmp_path, _DATA / "claude_code" / "parallel_tools.jsonl")
    decision = report["decision"]
    assert isinstance(decision, dict)
    assert decision["current"] == "none"
    assert decision["strategy"] == "multi-point"
    assert not any("Claude Code's layout" in line for line in decision["advice"])
    assert [n for n, c in report["miss_causes"].items() if n.startswith("as-logged")] == []


def test_a_placement_the_simulator_refuses_names_its_strategy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def two_points(self: LastMessageStrategy, request: Request) -> list[Checkpoint]:
        return [Checkpoint(1, 300.0), Checkpoint(request.n_blocks, 300.0)]

    monkeypatch.setattr(LastMessageStrategy, "place", two_points)
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"my.one-point": _ONE_POINT_MODEL}))
    argv = ["replay", str(_LOG), "--model", "my.one-point", "--models", str(models), "--strategy", "last-message"]
    assert main([*argv, "--no-chart", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "promptcache: error: strategy last-message: 2 cache points in one request; my.one-point allows at most 1"
    )
