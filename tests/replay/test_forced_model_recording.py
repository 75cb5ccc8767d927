"""``--model`` prices and caches every call as the forced model; the log's own bill stays priced by the logged
model, except where that model has no price (a test double): a TrafficRecorder recording of such a model replays
with ``--model``, its bill priced as the forced model and marked as not comparable. A recording cut short by a crash mid-write (a truncated last line) is read
without that line, with the broken-line warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from promptcache._cli import main

SYSTEM = "You are a helpful assistant. " * 200


def _line(i: int) -> dict[str, Any]:
    details = {"cache_read": 1200 if i else 0, "cache_creation": 0 if i else 1200}
    return {
        "promptcache": "call", "version": 1, "id": f"c{i}", "started": 1772442000 + 10 * i,
        "ended": 1772442001 + 10 * i, "thread_id": "t1", "user": None, "model": "scripted",
        "model_class": "FakeChatModel",
        "request": {
            "messages": [{"type": "system", "data": {"content": SYSTEM}}, {"type": "human", "data": {"content": f"q{i}"}}],
            "tools": [], "settings": {},
        },
        "response": {
            "message": {"type": "ai", "data": {"content": f"answer {i}"}},
            "usage_metadata": {"input_tokens": 1210, "output_tokens": 5, "total_tokens": 1215,
                               "input_token_details": details},
        },
        "text": "kept",
    }  # fmt: skip


def _recording(tmp_path: Path, cut: int = 0) -> Path:
    text = "".join(json.dumps(_line(i)) + "\n" for i in range(3))
    path = tmp_path / "recording.jsonl"
    path.write_text(text[: len(text) - cut])
    return path


def _replay(tmp_path: Path, path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, list[str]]:
    code = main(["replay", str(path), "--no-chart", "--out", str(tmp_path / "o"), *extra])
    return code, [line for line in capsys.readouterr().err.splitlines() if line.startswith("promptcache:")]


def test_a_recording_of_an_unpriced_model_is_priced_as_the_forced_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _recording(tmp_path)
    code, err = _replay(tmp_path, path, capsys)
    assert code == 2 and err[0].startswith("promptcache: error: no Amazon Bedrock price for model 'scripted'")
    code, err = _replay(tmp_path, path, capsys, "--model", "claude-sonnet-4-5")
    assert (code, err) == (0, [])
    as_logged = json.loads((tmp_path / "o" / "replay.json").read_text())["as_logged"]
    assert as_logged["not_compared"] == "--model forces claude-sonnet-4-5 while the log was billed for scripted"
    # 3 x 10 uncached at $3, 2 x 1,200 read at $0.30, 1,200 written at $3.75 per 1M tokens (Claude Sonnet 4.5)
    assert as_logged["logged"]["cost_usd"] == 0.00531


def test_a_truncated_last_line_is_skipped_with_the_broken_line_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _recording(tmp_path, cut=40)
    code, err = _replay(tmp_path, path, capsys, "--model", "claude-sonnet-4-5")
    assert (code, err) == (
        0,
        [
            f"promptcache: warning: {path}:3: skipped 1 line that is not valid JSON (first here: unexpected end of "
            "data); by record type (read before the break): 1 unknown; no assistant record (an API call's); the 1 "
            "line of unknown type may hold an API call, missing from the replay and the bill; use --strict to stop at "
            "the first one"
        ],
    )
    assert json.loads((tmp_path / "o" / "replay.json").read_text())["requests"] == 2
