"""A ``drop_text`` recording whose redacted sizes no recorded request could have is refused (exit 2, file:line)
before any stand-in text is built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import main


def _line(chars: int) -> str:
    mark = {"promptcache_redacted": {"chars": chars, "sha256": "ab" * 32}}
    rec = {
        "promptcache": "call",
        "version": 1,
        "id": "c1",
        "started": 1796182269.0,
        "ended": 1796182270.0,
        "thread_id": "t1",
        "user": None,
        "model": "anthropic.claude-sonnet-4-20250514-v1:0",
        "request": {"messages": [{"type": "human", "data": {"content": mark}}]},
        "response": {"message": {"type": "ai", "data": {"content": "ok"}}, "usage_metadata": None},
        "text": "dropped",
    }
    return json.dumps(rec) + "\n"


def test_huge_redacted_size_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_text(_line(12) + _line(10**11))
    code = main(["replay", str(path), "--out", str(tmp_path / "out"), "--no-chart"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(f"promptcache: error: {path}:2: "), err
    assert "100,000,000,000" in err
    assert not (tmp_path / "out").exists()
