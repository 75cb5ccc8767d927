"""Broken lines are counted by the record type their text reads before the break, so the warning says whether any
was an API call record (an assistant reply: the bill can miss it) or only other records (a system api_error
record, a user message)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from promptcache._cli import main
from promptcache.replay._skipped import SkippedLines, record_type


@pytest.mark.parametrize(
    ("before", "kind"),
    [
        ('{"parentUuid":"a","type":"user","message":{"role":"user","content":[{"type":"tool_result","c', "user"),
        # Claude Code writes an assistant record's type after its message: the message's role says it
        ('{"parentUuid":"a","message":{"model":"m","id":"msg_1","type":"message","role":"assistant","content":[{"t',
         "assistant"),
        ('{"parentUuid":"a","type":"system","subtype":"api_error","cause":{"code":"Conn', "system"),
        ('{"parentUuid":"a","message":{"model":"m","content":[{"type":"text","text":"hi', "unknown"),  # nested only
        ('{"note":"a \\"type\\":\\"assistant\\" in a string","type":"summary","x":', "summary"),
        ("", "unknown"),
    ],
)  # fmt: skip
def test_the_record_type_is_read_from_the_text_before_the_break(before: str, kind: str) -> None:
    assert record_type(before) == kind


def _line(rec: dict[str, Any]) -> str:
    return json.dumps(rec, separators=(",", ":"))


def _broken(rec: dict[str, Any], at: str) -> str:
    """``rec``'s line cut just after ``at`` and left unterminated with a raw control character (not JSON)."""
    text = _line(rec)
    return text[: text.index(at) + len(at)] + "\x01"


def _session(path: Path, api_call: bool) -> Path:
    usage = {"input_tokens": 3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 5}

    def rec(i: int, kind: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {"parentUuid": f"u{i - 1}" if i else None, "sessionId": "s", "uuid": f"u{i}",
                "timestamp": f"2026-03-02T10:00:{i:02d}.000Z", "message": message, "type": kind, **extra}  # fmt: skip

    def reply(i: int) -> dict[str, Any]:
        content = [{"type": "text", "text": f"answer {i}"}]
        message = {"model": "claude-opus-4-6", "id": f"msg_{i}", "role": "assistant", "content": content}
        return {**rec(i, "assistant", {**message, "usage": usage}, requestId=f"req_{i}")}

    lines = [
        _line(rec(0, "user", {"role": "user", "content": "first question"})),
        _line(reply(1)),
        _line(rec(2, "user", {"role": "user", "content": "second question"})),
        _line(reply(3)),
    ]
    error = {"parentUuid": "u3", "sessionId": "s", "uuid": "u4", "timestamp": "2026-03-02T10:00:04.000Z",
             "type": "system", "subtype": "api_error", "cause": {"code": "ConnectionRefused"}}  # fmt: skip
    lines.append(_broken(error, '"code":"Conn'))
    lines.append(_broken(rec(5, "user", {"role": "user", "content": "third question"}), "third"))
    if api_call:
        lines.append(_broken(reply(6), "answer"))
    lines.append(_line(rec(7, "user", {"role": "user", "content": "fourth question"})))
    lines.append(_line(reply(8)))
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[list[str], dict[str, Any]]:
    out = tmp_path / "o"
    assert main(["replay", str(path), "--no-chart", "--out", str(out)]) == 0
    return capsys.readouterr().err.splitlines(), json.loads((out / "replay.json").read_text())


def test_broken_records_of_other_types_leave_the_bill_complete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _session(tmp_path / "s.jsonl", api_call=False)
    err, report = _run(path, tmp_path, capsys)
    assert err == [
        f"promptcache: warning: {path}:5: skipped 2 lines that are not valid JSON (first here: unexpected "
        "control character in string); by record type (read before the break): 1 system, 1 user; no assistant "
        "record (an API call's): the bill misses none of them; use --strict to stop at the first one"
    ]
    assert report["skipped_types"] == {"system": 1, "user": 1}


def test_a_broken_api_call_record_is_named_as_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _session(tmp_path / "s.jsonl", api_call=True)
    err, report = _run(path, tmp_path, capsys)
    assert err == [
        f"promptcache: warning: {path}:5: skipped 3 lines that are not valid JSON (first here: unexpected "
        "control character in string); by record type (read before the break): 1 system, 1 user, 1 assistant; 1 "
        "broken assistant record, a call with no other record (its usage is missing from the replay); use --strict "
        "to stop at the first one"
    ]
    assert report["skipped_calls_missing"] == 1
    assert report["skipped_types"] == {"system": 1, "user": 1, "assistant": 1}


def test_the_tally_counts_each_type() -> None:
    tally = SkippedLines()
    tally.add("f", 2, "x", before='{"type":"assistant",')
    tally.add("f", 3, "x", before='{"type":"assistant",')
    tally.add("f", 4, "x", before="{")
    assert tally.types == {"assistant": 2, "unknown": 1}
