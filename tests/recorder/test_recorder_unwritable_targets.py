"""A recorder target that exists but cannot be appended to (``/proc/version``), or a new file in a folder that
takes none, is refused when the recorder is built; the check changes nothing on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptcache import TrafficRecorder


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs /proc")
def test_a_file_that_cannot_be_appended_to_is_refused() -> None:
    with pytest.raises(PermissionError, match=r"target '/proc/version' cannot be written: "):
        TrafficRecorder("/proc/version")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_a_new_file_in_a_folder_that_takes_none_is_refused() -> None:
    with pytest.raises(PermissionError, match=r"target '/proc/self/calls.jsonl' cannot be written: "):
        TrafficRecorder("/proc/self/calls.jsonl")


def test_an_existing_file_is_left_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "calls.jsonl"
    target.write_text("earlier\n")
    TrafficRecorder(target)
    assert target.read_text() == "earlier\n" and sorted(p.name for p in tmp_path.iterdir()) == ["calls.jsonl"]
