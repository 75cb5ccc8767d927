"""Inputs counted once: the same file twice, a session log beside its folder, ``dir/*``, copies of one log; a
Claude Code project folder stands for every session in it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from promptcache._cli import main
from promptcache.replay._engine import run_replay
from promptcache.replay._inputs import expand_inputs

MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"
DATA = Path(__file__).resolve().parents[1] / "data" / "claude_code"


def _project(tmp_path: Path) -> Path:
    """A project folder: the fixture session ``folder-session`` (log + folder), ``parallel_tools.jsonl`` and a
    LICENSE file."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copytree(DATA / "folder-session", project / "folder-session")
    shutil.copy(DATA / "folder-session.jsonl", project / "folder-session.jsonl")
    shutil.copy(DATA / "parallel_tools.jsonl", project / "parallel_tools.jsonl")
    (project / "LICENSE").write_text("MIT\n")
    return project


def test_the_same_file_twice_is_read_once(tmp_path: Path) -> None:
    path = DATA / "parallel_tools.jsonl"
    once = run_replay([path], MODEL, ["none"])
    spelled = str(path).replace("/claude_code/", "/claude_code/./")  # the same file by another name
    twice = run_replay([str(path), spelled], MODEL, ["none"])
    assert twice.requests == once.requests == 2
    assert twice.merged.repeated_files == [spelled]


def test_a_log_and_its_folder_are_read_once_through_the_folder(tmp_path: Path) -> None:
    folder = DATA / "folder-session"
    alone = run_replay([folder], MODEL, ["none"])
    both = run_replay([DATA / "folder-session.jsonl", folder], MODEL, ["none"])
    assert both.requests == alone.requests and both.conversations == alone.conversations
    assert both.merged.covered_files == [str(DATA / "folder-session.jsonl")] and not both.merged.repeated_files
    inputs, _ = expand_inputs([folder, DATA / "folder-session.jsonl"])
    assert inputs == [folder]


def test_a_project_folder_reads_every_session_once(tmp_path: Path) -> None:
    project = _project(tmp_path)
    inputs, merged = expand_inputs([project])
    assert inputs == [project / "folder-session", project / "parallel_tools.jsonl"]  # no LICENSE
    assert merged.project_folders == [str(project)]
    whole = run_replay([project], MODEL, ["none"])
    parts = run_replay([project / "folder-session"], MODEL, ["none"]).requests + 2
    assert whole.requests == parts
    star = sorted(project.iterdir())  # what dir/* gives, LICENSE left out by the shell glob dir/*.jsonl dir/*/
    star = [p for p in star if p.name != "LICENSE"]
    assert run_replay(star, MODEL, ["none"]).requests == parts


def test_copies_of_one_log_count_each_call_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "copy.jsonl"
    shutil.copy(DATA / "parallel_tools.jsonl", copy)
    result = run_replay([DATA / "parallel_tools.jsonl", copy], MODEL, ["none"])
    assert (result.requests, result.merged.merged_calls) == (2, 2)
    out = tmp_path / "out"
    assert main(["replay", str(DATA / "parallel_tools.jsonl"), str(copy), "--out", str(out), "--no-chart"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "promptcache: warning: counted once: 2 API calls logged in more than one file (the same call each time)"
    ]
    report = json.loads((out / "replay.json").read_text())
    assert report["merged"] == {
        "repeated_files": [],
        "covered_files": [],
        "project_folders": [],
        "merged_calls": 2,
        "merged_within_file": 0,
        "merged_differing": 0,
    }
    assert report["requests"] == 2
