"""A Claude Code log whose ``usage`` holds values that are not token counts, or whose ``parentUuid`` links form a
cycle: read with one warning that names the first such line (the usage of such a line is not read; the cycle is
cut where a record names a parent logged after it), or, under ``--strict``, a one-line error, exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from promptcache._cli import main

TS = "2026-03-02T10:00:0{}.000Z"
USAGE = {"input_tokens": 3, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 10, "output_tokens": 7}


def _record(kind: str, uuid: str, parent: str | None, text: str, sec: int, **message: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"role": kind, "content": text, **message}
    rec: dict[str, Any] = {"parentUuid": parent, "sessionId": "s", "type": kind, "message": body, "uuid": uuid}
    rec["timestamp"] = TS.format(sec)
    if kind == "assistant":
        rec["requestId"] = f"r-{uuid}"
        body.update(model="claude-opus-4-6", id=f"msg_{uuid}")
    return rec


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _replay(tmp_path: Path, path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, list[str]]:
    code = main(["replay", str(path), "--out", str(tmp_path / "out"), "--no-chart", *extra])
    return code, [line for line in capsys.readouterr().err.splitlines() if line.startswith("promptcache:")]


def _bad_usage_log(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "bad-usage.jsonl",
        [
            _record("user", "u1", None, "Hello", 1),
            _record("assistant", "a1", "u1", "Hi", 2, usage={**USAGE, "output_tokens": "7"}),
            _record("user", "u2", "a1", "And now?", 3),
            _record("assistant", "a2", "u2", "Now this.", 4, usage={**USAGE, "input_tokens": -3}),
            _record("user", "u3", "a2", "Last one", 5),
            _record("assistant", "a3", "u3", "Done.", 6, usage=USAGE),
        ],
    )


def test_bad_usage_lines_are_counted_with_their_reason_and_their_usage_is_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _bad_usage_log(tmp_path)
    code, err = _replay(tmp_path, path, capsys)
    assert code == 0
    assert err == [
        f"promptcache: warning: {path}:2: read 2 lines without their usage, which is not token counts (first "
        "here: message.usage.output_tokens must be a token count (an integer from 0 to 4,294,967,295), got '7'); use --strict to stop "
        "at the first one"
    ]
    report = orjson.loads((tmp_path / "out" / "replay.json").read_bytes())
    assert report["requests"] == 3


def test_bad_usage_under_strict_is_one_error_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _bad_usage_log(tmp_path)
    code, err = _replay(tmp_path, path, capsys, "--strict")
    assert (code, err) == (
        2,
        [
            f"promptcache: error: {path}:2: message.usage.output_tokens must be a token count (an integer from 0 to 4,294,967,295), got '7'"
        ],
    )
    assert not (tmp_path / "out").exists()


def test_one_bad_usage_line_is_named_in_the_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(
        tmp_path / "one.jsonl",
        [
            _record("user", "u1", None, "Hello", 1),
            _record("assistant", "a1", "u1", "Hi", 2, usage={"input_tokens": 4.5}),
        ],
    )
    code, err = _replay(tmp_path, path, capsys)
    assert code == 0
    assert err[0].startswith(f"promptcache: warning: {path}:2: read 1 line without its usage, which is not token")


def test_a_parent_uuid_cycle_is_cut_and_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # u1 names a2 (logged after it) as its parent, a2 descends from u1: a cycle u1 -> a2 -> u2 -> a1 -> u1
    path = _write(
        tmp_path / "cycle.jsonl",
        [
            _record("user", "u1", "a2", "Hello", 1),
            _record("assistant", "a1", "u1", "Hi", 2, usage=USAGE),
            _record("user", "u2", "a1", "More", 3),
            _record("assistant", "a2", "u2", "Sure", 4, usage=USAGE),
        ],
    )
    code, err = _replay(tmp_path, path, capsys)
    assert code == 0
    assert err == [
        f"promptcache: warning: {path}:1: parentUuid 'a2' closes a cycle (that record descends from this one); the "
        "chain is cut here, this record starts it"
    ]
    report = orjson.loads((tmp_path / "out" / "replay.json").read_bytes())
    assert report["requests"] == 2


def test_one_broken_json_line_is_named_in_the_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cut.jsonl"
    good = [_record("user", "u1", None, "Hello", 1), _record("assistant", "a1", "u1", "Hi", 2, usage=USAGE)]
    path.write_text("".join(json.dumps(r) + "\n" for r in good) + '{"type": "user", "uuid\n')
    code, err = _replay(tmp_path, path, capsys)
    assert code == 0
    assert err[0].startswith(f"promptcache: warning: {path}:3: skipped 1 line that is not valid JSON (first here: ")
