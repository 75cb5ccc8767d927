"""A broken assistant record loses its API call only where no record that was read carries its message id or
``requestId`` (Claude Code writes one record per content block of a reply, all with the same ids): the warning,
the "as logged:" line and ``replay.json``'s ``skipped_calls_missing`` count those calls only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from promptcache._cli import main
from promptcache.replay._skipped import SkippedLines, call_ids

USAGE = {"input_tokens": 3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 5}


def _line(rec: dict[str, Any]) -> str:
    return json.dumps(rec, separators=(",", ":"))


def _broken(rec: dict[str, Any], at: str) -> str:
    """``rec``'s line cut just after ``at`` and left unterminated with a raw control character (not JSON)."""
    text = _line(rec)
    return text[: text.index(at) + len(at)] + "\x01"


def _rec(i: int, kind: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"parentUuid": f"u{i - 1}" if i else None, "sessionId": "s", "uuid": f"u{i}",
            "timestamp": f"2026-03-02T10:00:{i:02d}.000Z", "message": message, "type": kind, **extra}  # fmt: skip


def _block(i: int, call: int, block: dict[str, Any]) -> dict[str, Any]:
    """One content-block record of reply ``call`` (ids ``msg_CALL`` / ``req_CALL``)."""
    message = {"model": "claude-opus-4-6", "id": f"msg_{call}", "role": "assistant", "content": [block]}
    return _rec(i, "assistant", {**message, "usage": USAGE}, requestId=f"req_{call}")


def _session(path: Path) -> Path:
    """Call 1: a thinking record (read) and a text record (broken); call 2: its only record broken; call 3 read."""
    lines = [
        _line(_rec(0, "user", {"role": "user", "content": "first question"})),
        _line(_block(1, 1, {"type": "thinking", "thinking": "plan", "signature": "sig"})),
        _broken(_block(2, 1, {"type": "text", "text": "answer one"}), "answer"),
        _line(_rec(3, "user", {"role": "user", "content": "second question"})),
        _broken(_block(4, 2, {"type": "text", "text": "answer two"}), "answer"),
        _line(_rec(5, "user", {"role": "user", "content": "third question"})),
        _line(_block(6, 3, {"type": "text", "text": "answer three"})),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_only_calls_without_another_record_count_as_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    path, out = _session(tmp_path / "s.jsonl"), tmp_path / "o"
    assert main(["replay", str(path), "--no-chart", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"promptcache: warning: {path}:3: skipped 2 lines that are not valid JSON (first here: unexpected "
        "control character in string); by record type (read before the break): 2 assistant; 2 broken assistant "
        "records, of which 1 is a call with no other record (its usage is missing from the replay); use --strict "
        "to stop at the first one"
    ]
    assert (
        "as logged: all 2 requests carry logged usage. 1 more call is not in the replay: every record of it is a "
        "broken line (skipped), so its usage is missing from every row, the billed one included."
    ) in captured.out
    report = json.loads((out / "replay.json").read_text())
    assert report["skipped_types"] == {"assistant": 2}
    assert report["skipped_calls_missing"] == 1


def test_call_ids_are_read_before_the_break() -> None:
    before = '{"parentUuid":"a","message":{"model":"m","id":"msg_01A","type":"message","role":"assistant","conte'
    assert call_ids(before) == ("msg_01A",)
    assert call_ids(before + 'nt":[],"usage":{}},"requestId":"req_9","type":"assistant","uu') == ("msg_01A", "req_9")
    assert call_ids('{"parentUuid":"a","message":{"content":[{"type":"tool_use","id":"toolu_1"') == ()


def test_calls_missing_counts_each_call_once() -> None:
    tally = SkippedLines()
    tally.seen({"message": {"id": "msg_1"}, "requestId": "req_1"})
    tally.seen({"requestId": "req_2"})
    tally.seen(["not", "a", "record"])
    for before in (
        '{"message":{"id":"msg_1","role":"assistant",',  # read under its message id
        '{"message":{"id":"msg_2","role":"assistant","content":[]},"requestId":"req_2",',  # read under requestId
        '{"message":{"id":"msg_3","role":"assistant",',  # lost, two broken records of one call
        '{"message":{"id":"msg_3","role":"assistant","content":[{"type":"text"',
        '{"message":{"role":"assistant","content":[{"type":"text"',  # no id readable: counted as a call
    ):
        tally.add("f", 2, "x", before=before)
    assert tally.types == {"assistant": 5}
    assert tally.calls_missing == 2
