"""``--out`` is tried before the run: a folder where nothing can be created (``/proc``) fails up front, and the
check leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptcache._cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "sample_conversations.json"


@pytest.mark.skipif(not Path("/proc/version").exists(), reason="needs /proc")
def test_out_under_proc_fails_before_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(SAMPLE), "--out", "/proc/promptcache-x", "--no-chart"]) == 2
    out, err = capsys.readouterr()
    assert err == (
        "promptcache: error: --out '/proc/promptcache-x' cannot be written: '/proc' is not writable "
        "(No such file or directory)\n"
    )
    assert out == ""  # nothing replayed


def test_the_check_leaves_nothing_behind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from promptcache._cli import _out_problem

    existing = tmp_path / "existing"
    existing.mkdir()
    assert _out_problem(existing) is None
    assert _out_problem(tmp_path / "new" / "deeper") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing"]
    assert list(existing.iterdir()) == []
