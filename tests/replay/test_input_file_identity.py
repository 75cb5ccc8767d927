"""Inputs are the same file by (device, inode), not by path: a hard link to a given log is read once; a project
folder's ``*.jsonl`` entries that are not regular files (a FIFO, a link to a device) are left out with one warning
naming them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from promptcache.replay._inputs import expand_inputs
from promptcache.replay._transcript import TranscriptWarning

COMPACT = Path(__file__).resolve().parents[1] / "data" / "claude_code" / "compact.jsonl"
SESSION = "0b7a3f52-8c2d-4e8f-9a11-5d6c7e8f9a0b"


def test_a_hard_link_is_the_same_file(tmp_path: Path) -> None:
    log = tmp_path / "a.json"
    shutil.copy(COMPACT, log)
    os.link(log, tmp_path / "b.json")
    units, merged = expand_inputs([log, tmp_path / "b.json"])
    assert units == [log]
    assert merged.repeated_files == [str(tmp_path / "b.json")]


def test_a_copy_is_another_file(tmp_path: Path) -> None:
    shutil.copy(COMPACT, tmp_path / "a.json")
    shutil.copy(COMPACT, tmp_path / "b.json")
    units, merged = expand_inputs([tmp_path / "a.json", tmp_path / "b.json"])
    assert (len(units), merged.repeated_files) == (2, [])


def test_a_fifo_and_a_device_link_in_a_project_folder_are_named(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(COMPACT, project / f"{SESSION}.jsonl")
    os.mkfifo(project / "1c9a1b0e-0000-4000-8000-000000000001.jsonl")
    os.symlink("/dev/zero", project / "1c9a1b0e-0000-4000-8000-000000000002.jsonl")
    with pytest.warns(TranscriptWarning) as caught:
        units, merged = expand_inputs([project])
    assert units == [project / f"{SESSION}.jsonl"]
    assert merged.project_folders == [str(project)]
    assert [str(w.message) for w in caught] == [
        f"{project}: skipped 2 entries named like a session log that are not regular files (a pipe, a device, a "
        "broken link: 1c9a1b0e-0000-4000-8000-000000000001.jsonl and 1 more)"
    ]
