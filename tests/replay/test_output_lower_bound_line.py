"""The terminal's output-cost line says the figure is a lower bound where the log's output counts are streaming
snapshots (Claude Code), and states it plainly elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptcache._cli import main

DATA = Path(__file__).resolve().parents[1] / "data"


def _report(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "160")
    assert main(["replay", str(path), "--no-chart", "--out", str(tmp_path / "o")]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_claude_code_output_cost_is_printed_as_a_lower_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _report(DATA / "claude_code" / "parallel_tools.jsonl", tmp_path, capsys, monkeypatch)
    assert (
        "Output tokens (at least 52) cost the same under every placement: at least $0.0011 (streaming snapshot: "
        "Claude Code logs output_tokens while the reply streams, often under half of the final count; output "
        "figures from this log are lower bounds)." in out
    )


def test_exact_output_counts_are_printed_without_a_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _report(DATA / "call_logs" / "openai_proxy.jsonl", tmp_path, capsys, monkeypatch)
    assert "Output tokens (34) cost the same under every placement: $0.0001." in out
    assert "at least" not in out
