"""With every ``usage`` removed from real Claude Code sessions (a copy made here), the ``as-logged`` row is still
priced, from Claude Code's own placement rules on estimated sizes, and marked as predicted; its bill is within 15 %
of the real one per session and 5 % pooled. Skipped without the shared data."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import orjson
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from shared_data import find_data_file  # noqa: E402

from promptcache._cli import main  # noqa: E402
from promptcache.replay._engine import run_replay  # noqa: E402

#: Sessions with 20 or more calls that read cleanly and log usage on every call (folder: with its sub-agents).
SESSIONS = (
    "claude_code/258c7280-ae70-4798-800f-63464d01a85d",
    "claude_code/ae4a77f8-aedd-4bc1-888f-c94edc91af04",
    "claude_code_ext/m-claude/43391f62-680a-4688-9dd8-3637467d6b23.jsonl",
    "claude_code_ext/m-claude/abc757d1-3da3-42fb-bb7b-ffa293a4ba29.jsonl",
    "claude_code_ext/m-claude/ff59cfd2-09dc-4a18-8c9f-0d46c3d4e8cd.jsonl",
)


def _strip(src: Path, dst: Path) -> None:
    out = []
    for raw in src.read_bytes().splitlines():
        rec = orjson.loads(raw)
        if isinstance(rec, dict) and isinstance(rec.get("message"), dict):
            rec["message"].pop("usage", None)
        out.append(orjson.dumps(rec))
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(b"\n".join(out) + b"\n")


def _copy_without_usage(path: Path, into: Path) -> Path:
    if path.is_dir():
        _strip(path.with_suffix(".jsonl"), into / f"{path.name}.jsonl")
        for agent in sorted((path / "subagents").glob("*.jsonl")):
            _strip(agent, into / path.name / "subagents" / agent.name)
        return into / path.name
    _strip(path, into / path.name)
    return into / path.name


def _sessions() -> list[Path]:
    paths = [find_data_file(name, required=False) for name in SESSIONS]
    if any(p is None for p in paths):
        pytest.skip("shared Claude Code sessions not present")
    return [p for p in paths if p is not None]


def test_prediction_without_usage_is_within_15_percent_per_session_and_5_pooled(tmp_path: Path) -> None:
    real_total = predicted_total = 0.0
    for i, path in enumerate(_sessions()):
        real = run_replay([path], "claude-sonnet-4-5", ["none"], combined=False)
        bare = run_replay([_copy_without_usage(path, tmp_path / str(i))], "claude-sonnet-4-5", ["none"], combined=False)
        assert real.logged is not None and real.as_logged_source == "logged"
        assert bare.logged is None and bare.as_logged_source == "predicted" and bare.logged_requests == 0
        row = bare.strategies["as-logged"]
        assert row.requests == real.logged.requests and not row.logged_only
        error = row.cost_usd / real.logged.cost_usd - 1
        assert abs(error) <= 0.15, (path.name, error)
        real_total += real.logged.cost_usd
        predicted_total += row.cost_usd
    assert abs(predicted_total / real_total - 1) <= 0.05


def test_the_report_says_which_figures_are_predicted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _sessions()[2]
    bare = _copy_without_usage(path, tmp_path / "bare")
    for source, expected, note in ((path, "logged", True), (bare, "predicted", False)):
        out = tmp_path / expected
        assert main(["replay", str(source), "--out", str(out), "--no-chart"]) == 0
        report = json.loads((out / "replay.json").read_text())
        assert report["as_logged_source"] == expected
        # Claude Code's logged output_tokens is a streaming snapshot: flagged whenever the log carries its usage
        assert (report["output_tokens_note"] is not None) is note
        if note:
            assert report["output_tokens_note"].startswith("streaming snapshot")
    capsys.readouterr()


def test_the_report_gives_the_predicted_row_at_both_ttls(tmp_path: Path) -> None:
    from promptcache.replay._prediction import predicted_note

    path = _sessions()[2]  # 43391f62 (Opus 4.5, 38 calls; its log wrote 5-minute entries only)
    real = run_replay([path], "claude-sonnet-4-5", ["none"], combined=False)
    bare = run_replay([_copy_without_usage(path, tmp_path)], "claude-sonnet-4-5", ["none"], combined=False)
    assert predicted_note(real) is None  # usage logged: the row is the log's, not predicted
    assert predicted_note(bare) == (
        "as logged: predicted (the log records no usage): Claude Code's placement rules on estimated sizes, "
        "$1.1198 at its 5-minute TTL, $1.3497 if the account caches for 1 hour (the log does not say which); the "
        "unlogged system prompt's size and what the account's other sessions kept cached are not in the log either."
    )
