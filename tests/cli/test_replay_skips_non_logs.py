"""Several paths (as ``dir/*`` gives them): a file that is not a log at all is skipped with one warning naming it;
given alone, or under ``--strict``, it stops the run (exit code 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from promptcache._cli import main

LOG = Path(__file__).resolve().parents[1] / "data" / "claude_code" / "parallel_tools.jsonl"
NOT_A_LOG = "LICENSE:1: not a JSON or JSONL transcript (invalid JSON: unexpected character, expected a JSON value)"


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(LOG, folder / "s.jsonl")
    (folder / "LICENSE").write_text("MIT License\n\nCopyright (c) the authors\n")
    return folder / "LICENSE", folder / "s.jsonl"


def test_a_non_log_among_several_paths_is_skipped_with_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    license_, log = _folder(tmp_path)
    out = tmp_path / "o"
    assert main(["replay", str(license_), str(log), "--no-chart", "--out", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"promptcache: warning: {license_.parent}/{NOT_A_LOG}; skipped it, as it is not a log"]
    report = json.loads((out / "replay.json").read_text())
    assert (report["conversations"], report["requests"]) == (1, 2)  # the log's own, as replayed alone


def test_a_single_non_log_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    license_, _ = _folder(tmp_path)
    assert main(["replay", str(license_), "--no-chart", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.splitlines() == [f"promptcache: error: {license_.parent}/{NOT_A_LOG}"]


def test_strict_stops_at_a_non_log_among_several(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    license_, log = _folder(tmp_path)
    assert main(["replay", str(log), str(license_), "--strict", "--no-chart", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.splitlines() == [f"promptcache: error: {license_.parent}/{NOT_A_LOG}"]


def test_several_paths_none_a_log_stop_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    license_, _ = _folder(tmp_path)
    readme = license_.with_name("README")
    readme.write_text("# logs\n")
    assert main(["replay", str(license_), str(readme), "--no-chart", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert (
        err[0]
        == "promptcache: error: nothing to replay: none of the 2 files given is a log (each is named in a warning)"
    )
    assert err[1:] == [
        f"promptcache: warning: {license_.parent}/{NOT_A_LOG}; skipped it, as it is not a log",
        f"promptcache: warning: {readme}:1: not a JSON or JSONL transcript (invalid JSON: unexpected character, "
        "expected a JSON value); skipped it, as it is not a log",
    ]
