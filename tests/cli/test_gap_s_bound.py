"""``--gap-s`` is at most a year (31,536,000 s: every prompt-cache lifetime is far shorter, so a longer gap
replays the same, and the run's span stays a finite number in replay.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import main


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], gap: str) -> tuple[int, str]:
    path = tmp_path / "conv.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]))
    code = main(["replay", str(path), "--gap-s", gap, "--out", str(tmp_path / "out"), "--no-chart"])
    return code, capsys.readouterr().err


def test_a_gap_over_a_year_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(tmp_path, capsys, "1e308")
    assert (code, err) == (2, "promptcache: error: --gap-s must be at most 31,536,000 seconds (a year), got 1e+308\n")
    assert not (tmp_path / "out").exists()


def test_a_gap_of_a_year_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(tmp_path, capsys, "31536000")
    assert code == 0, err
