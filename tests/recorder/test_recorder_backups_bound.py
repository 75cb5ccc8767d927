"""An absurd ``backups`` count is refused when the recorder is built (rotation walks every kept file under the
write lock, so a huge count would hang the model call that rotates)."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptcache import TrafficRecorder


def test_huge_backups_refused_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"backups must be a count from 0 to 1000, got 1000000000000"):
        TrafficRecorder(tmp_path / "r.jsonl", max_bytes=10, backups=10**12)
    assert not (tmp_path / "r.jsonl").exists()


def test_largest_backups_accepted(tmp_path: Path) -> None:
    recorder = TrafficRecorder(tmp_path / "r.jsonl", max_bytes=10, backups=1000)
    assert recorder.lines_written == 0
