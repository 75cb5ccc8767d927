"""An API call found again by its request id is replayed once, and the report says whether the copies were the
same (a resumed session's history), where they were (one file or several), and, when the replies differ, that
they did and which copy was kept (the first read)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from promptcache._cli import main

SYSTEM = "You are a helpful assistant. " * 200


def _line(call: str, answer: str, started: float) -> dict[str, Any]:
    return {
        "promptcache": "call", "version": 1, "id": call, "started": started, "ended": started + 1,
        "thread_id": "t1", "user": None, "model": "us.anthropic.claude-sonnet-4-20250514-v1:0",
        "model_class": "ChatBedrockConverse",
        "request": {"messages": [{"type": "system", "data": {"content": SYSTEM}},
                                 {"type": "human", "data": {"content": f"q {call}"}}], "tools": [], "settings": {}},
        "response": {"message": {"type": "ai", "data": {"content": answer}},
                     "usage_metadata": {"input_tokens": 1210, "output_tokens": 5, "total_tokens": 1215}},
    }  # fmt: skip


def _file(path: Path, *lines: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _merged(tmp_path: Path, capsys: pytest.CaptureFixture[str], *paths: Path) -> tuple[dict[str, Any], list[str]]:
    out = tmp_path / "out"
    assert main(["replay", *map(str, paths), "--no-chart", "--out", str(out)]) == 0
    text = capsys.readouterr()
    lines = [line for line in (text.out + text.err).splitlines() if "counted once" in line]
    return json.loads((out / "replay.json").read_text())["merged"], lines


def test_identical_copies_in_two_files_say_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _file(tmp_path / "a.jsonl", _line("c0", "answer", 100.0), _line("c1", "more", 110.0))
    b = _file(tmp_path / "b.jsonl", _line("c0", "answer", 100.0), _line("c2", "other", 120.0))
    merged, lines = _merged(tmp_path, capsys, a, b)
    assert (merged["merged_calls"], merged["merged_within_file"], merged["merged_differing"]) == (1, 0, 0)
    assert "counted once: 1 API call logged in more than one file (the same call each time)" in " ".join(lines)


def test_different_replies_under_one_id_in_one_file_say_which_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _file(tmp_path / "a.jsonl", _line("c0", "answer", 100.0), _line("c1", "x", 105.0), _line("c0", "other", 110.0))
    merged, lines = _merged(tmp_path, capsys, a)
    assert (merged["merged_calls"], merged["merged_within_file"], merged["merged_differing"]) == (1, 1, 1)
    assert (
        "counted once: 1 API call logged within one file by request id; 1 with a different prompt or reply "
        "(first: c0), 0 the same; the first read is kept"
    ) in " ".join(lines)


def test_a_different_prompt_under_one_id_is_a_difference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = _line("c0", "answer", 100.0)
    other["request"]["messages"][1]["data"]["content"] = "another question"
    a = _file(tmp_path / "a.jsonl", _line("c0", "answer", 100.0))
    b = _file(tmp_path / "b.jsonl", other)
    merged, _ = _merged(tmp_path, capsys, a, b)
    assert (merged["merged_calls"], merged["merged_within_file"], merged["merged_differing"]) == (1, 0, 1)
