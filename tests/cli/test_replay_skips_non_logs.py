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
    # the warnings the error refers to come first
    assert capsys.readouterr().err.splitlines() == [
        f"promptcache: warning: {license_.parent}/{NOT_A_LOG}; skipped it, as it is not a log",
        f"promptcache: warning: {readme}:1: not a JSON or JSONL transcript (invalid JSON: unexpected character, "
        "expected a JSON value); skipped it, as it is not a log",
        "promptcache: error: nothing to replay: none of the 2 files given is a log (each is named in a warning)",
    ]


def test_an_earlier_replay_json_among_several_paths_is_skipped_with_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, log = _folder(tmp_path)
    assert main(["replay", str(log), "--no-chart", "--out", str(log.parent)]) == 0  # replay.json beside the log
    capsys.readouterr()
    earlier = log.parent / "replay.json"
    out = tmp_path / "o"
    assert main(["replay", str(earlier), str(log), "--no-chart", "--out", str(out)]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"promptcache: warning: {earlier}: the report of an earlier promptcache replay (a replay.json), not a log; "
        "skipped it"
    ]
    report = json.loads((out / "replay.json").read_text())
    assert (report["conversations"], report["requests"]) == (1, 2)


def test_an_earlier_replay_json_given_alone_is_an_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, log = _folder(tmp_path)
    assert main(["replay", str(log), "--no-chart", "--out", str(tmp_path / "first")]) == 0
    capsys.readouterr()
    earlier = tmp_path / "first" / "replay.json"
    assert main(["replay", str(earlier), "--no-chart", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"promptcache: error: {earlier}: the report of an earlier promptcache replay (a replay.json), not a log"
    ]
