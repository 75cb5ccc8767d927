"""Broken lines in a JSONL log: skipped with one warning (count, first FILE:LINE), counted in replay.json, and the
tree of a Claude Code log runs through them; ``--strict`` stops at the first one (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from promptcache._cli import main
from promptcache.replay._engine import run_replay
from promptcache.replay._readers import read_file
from promptcache.replay._skipped import SkippedLines, skipping
from promptcache.replay._transcript import TranscriptError

MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"


def _rec(kind: str, uuid: str, parent: str | None, content: Any, sec: int, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(model="claude-opus-4-6", id=f"msg_{uuid}")
        message["usage"] = {"input_tokens": 3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0,
                            "output_tokens": 5}  # fmt: skip
        extra.setdefault("requestId", f"req_{uuid}")
    return {"parentUuid": parent, "sessionId": "sb", "type": kind, "message": message, "uuid": uuid,
            "timestamp": f"2026-03-02T10:00:{sec:02d}.000Z", **extra}  # fmt: skip


def _session(path: Path, cut: set[int] = frozenset()) -> Path:  # type: ignore[assignment]
    """user u1 -> a1 (tool_use) -> u2 (tool_result) -> a2 -> u3 -> a3; lines in ``cut`` (1-based) are cut in half,
    as a redaction tool leaves them (the parentUuid at their start survives, their uuid does not)."""
    use = [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}}]
    result = [{"type": "tool_result", "tool_use_id": "t1", "content": "print('a')"}]
    records = [
        _rec("user", "u1", None, "Read a.py", 1),
        _rec("assistant", "a1", "u1", use, 2),
        _rec("user", "u2", "a1", result, 3),
        _rec("assistant", "a2", "u2", [{"type": "text", "text": "It prints a."}], 4),
        _rec("user", "u3", "a2", "Thanks", 5),
        _rec("assistant", "a3", "u3", [{"type": "text", "text": "You are welcome."}], 6),
    ]
    lines = [json.dumps(r) for r in records]
    for n in cut:
        lines[n - 1] = lines[n - 1][: len(lines[n - 1]) // 2] + " To: [REDACTED]"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_broken_line_is_skipped_and_the_tree_runs_through_it(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl", {3})  # the tool result u2, which a2 names as its parent
    with pytest.raises(TranscriptError, match=r"s\.jsonl:3: invalid JSON on this line"):
        read_file(path)  # outside a replay: strict
    tally = SkippedLines()
    with skipping(tally):
        [conv] = read_file(path)
    assert (tally.count, tally.first, tally.per_file) == (1, f"{path}:3", {str(path): 1})
    # one conversation of three calls: a2 still continues a1's thread (the broken line keeps its place, and as a
    # user record what survives of its message: promptcache.replay._claude_code_tree.broken_line)
    assert conv.replies == [1, 3, 5] and conv.meta["context_start"] == "session"
    assert [m.role for m in conv.messages] == ["user", "assistant", "user", "assistant", "user", "assistant"]


def test_a_broken_line_no_record_names_stays_out_of_the_tree(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl", {6})  # the last reply: nothing names it
    tally = SkippedLines()
    with skipping(tally):
        [conv] = read_file(path)
    assert tally.count == 1 and conv.replies == [1, 3]  # two calls left, the broken one is not invented


def test_cli_skips_with_one_warning_and_the_json_counts_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _session(tmp_path / "s.jsonl", {3, 5})
    out = tmp_path / "out"
    assert main(["replay", str(path), "--out", str(out), "--no-chart"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"promptcache: warning: {path}:3: skipped 2 lines that are not valid JSON (first here: unexpected "
        "control character in string); by record type (read before the break): 2 user; no assistant record (an "
        "API call's): the bill misses none of them; use --strict to stop at the first one"
    ]
    report = json.loads((out / "replay.json").read_text())
    assert (report["skipped_lines"], report["skipped_first"]) == (2, f"{path}:3")
    assert report["skipped_per_file"] == {str(path): 2}
    assert report["skipped_types"] == {"user": 2}
    assert report["requests"] == 3


def test_strict_keeps_the_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _session(tmp_path / "s.jsonl", {3})
    assert main(["replay", str(path), "--out", str(tmp_path / "out"), "--no-chart", "--strict"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"promptcache: error: {path}:3: invalid JSON on this line")
    assert not (tmp_path / "out").exists()


def test_a_broken_first_line_or_a_mostly_broken_file_is_still_an_error(tmp_path: Path) -> None:
    first = _session(tmp_path / "first.jsonl", {1})
    with pytest.raises(TranscriptError, match=r"first\.jsonl:1: "):
        run_replay([first], MODEL, ["none"])
    mostly = _session(tmp_path / "mostly.jsonl", {2, 3, 4, 5})
    with pytest.raises(TranscriptError, match=r"mostly\.jsonl:2: invalid JSON on this line"):
        run_replay([mostly], MODEL, ["none"])


def test_result_counts_skipped_lines(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl", {3})
    result = run_replay([path], MODEL, ["none"])
    assert (result.skipped.count, result.skipped.first, result.requests) == (1, f"{path}:3", 3)
    with pytest.raises(TranscriptError):
        run_replay([path], MODEL, ["none"], strict=True)
