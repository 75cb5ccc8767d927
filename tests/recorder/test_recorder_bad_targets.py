"""A recorder target that cannot take a line (an empty path, a directory, a file in a missing folder) is refused
when the recorder is built, naming the path, instead of losing every line later."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptcache import TrafficRecorder


def test_an_empty_path_is_refused() -> None:
    with pytest.raises(ValueError, match=r"target must be a file path, got an empty path ''"):
        TrafficRecorder("")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=rf"target {str(tmp_path)!r} is a directory, not a file"):
        TrafficRecorder(tmp_path)


def test_a_file_in_a_missing_folder_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "no-such-folder" / "calls.jsonl"
    with pytest.raises(FileNotFoundError, match=rf"target {str(target)!r}: folder .*no-such-folder' does not exist"):
        TrafficRecorder(target)
    assert not target.parent.exists()


def test_a_new_file_in_an_existing_folder_is_accepted_and_not_created_before_the_first_call(tmp_path: Path) -> None:
    target = tmp_path / "calls.jsonl"
    recorder = TrafficRecorder(str(target))
    assert (recorder.lines_written, target.exists()) == (0, False)
