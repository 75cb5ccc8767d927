"""A timestamp far outside the rest of its log (``9999-12-31`` among a day's calls, ``0001-01-01``, epoch
``1e300``) is set aside with one warning, so no one record sets the log's time span and the monthly rate; a JSONL
file of one conversation per line, streamed by the replay, is checked as a file read whole is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import main
from promptcache.replay._far_timestamps import FAR_GAP_S, far_times
from promptcache.replay._readers import read_file
from promptcache.replay._stream import iter_conversations
from promptcache.replay._transcript import TranscriptWarning

COMPACT = Path(__file__).resolve().parents[1] / "data" / "claude_code" / "compact.jsonl"
DAY = 86_400.0
T0 = 1_772_445_600.0  # 2026-03-02T10:00:00Z


def test_a_lone_late_time_is_far() -> None:
    times = [T0, T0 + 60, T0 + 120, 253_402_300_799.0]  # ... and 9999-12-31T23:59:59Z
    assert far_times(times) == {253_402_300_799.0}


def test_a_lone_early_time_is_far() -> None:
    assert far_times([T0 - 400 * DAY, T0, T0 + 60, T0 + 3600]) == {T0 - 400 * DAY}


def test_times_outside_the_calendar_are_far_even_alone() -> None:
    assert far_times([-62_135_596_800.0, 1e297, T0]) == {-62_135_596_800.0, 1e297}


def test_a_log_of_several_sessions_keeps_its_times() -> None:
    weekly = [T0 + 7 * DAY * i + s for i in range(10) for s in (0.0, 30.0)]
    assert far_times(weekly) == set()
    # a gap over 30 days but within ten times the others' span is a pause, not a fault
    assert far_times([T0, T0 + 10 * DAY, T0 + 20 * DAY, T0 + 20 * DAY + 2 * FAR_GAP_S]) == set()


def test_two_times_are_never_judged_by_each_other() -> None:
    assert far_times([T0, T0 + 5000 * DAY]) == set()


def _with_stamp(tmp_path: Path, stamp: str) -> Path:
    lines = COMPACT.read_text().splitlines()
    rec = json.loads(lines[3])
    rec["timestamp"] = stamp
    lines[3] = json.dumps(rec)
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("stamp", ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z"])
def test_one_far_claude_code_line_does_not_set_the_span(
    stamp: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _with_stamp(tmp_path, stamp)
    with pytest.warns(TranscriptWarning) as caught:
        read_file(path)
    assert [str(w.message) for w in caught if "far outside" in str(w.message)] == [
        f"{path}: ignored 1 timestamp far outside the rest of the log (first: {stamp}; 9 kept); those messages are "
        "replayed as untimed, so they do not set the log's time span"
    ]
    assert main(["replay", str(path), "--no-chart", "--out", str(tmp_path / "out")]) == 0
    assert main(["replay", str(COMPACT), "--no-chart", "--out", str(tmp_path / "clean")]) == 0
    spans = [json.loads((tmp_path / d / "replay.json").read_text())["span_s"] for d in ("out", "clean")]
    assert spans[0] == spans[1] == 30.0
    assert "ignored 1 timestamp far outside the rest of the log" in capsys.readouterr().err


def _conversation_per_line(tmp_path: Path) -> Path:
    stamps = ["2026-03-02T10:00:00Z", "2026-03-02T10:00:30Z", "9999-12-31T23:59:59Z", "2026-03-02T10:01:00Z"]
    lines = [
        json.dumps([{"role": "user", "content": f"question {i}", "timestamp": t}, {"role": "assistant", "content": "ok", "timestamp": t}])
        for i, t in enumerate(stamps)
    ]  # fmt: skip
    path = tmp_path / "conversations.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_one_far_time_in_a_conversation_per_line_jsonl_is_set_aside_as_streamed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _conversation_per_line(tmp_path)
    warning = (
        f"{path}: ignored 2 timestamps far outside the rest of the log (first: 9999-12-31T23:59:59Z; 6 kept); those "
        "messages are replayed as untimed, so they do not set the log's time span"
    )
    with pytest.warns(TranscriptWarning) as caught:
        streamed = list(iter_conversations([path]))
    assert [str(w.message) for w in caught] == [warning]
    with pytest.warns(TranscriptWarning, match="ignored 2 timestamps"):
        whole = [(c.id, [m.timestamp for m in c.messages]) for c in read_file(path)]
    assert [(c.id, [m.timestamp for m in c.messages]) for c in streamed] == whole
    assert [stamps for _, stamps in whole] == [[T0, T0], [T0 + 30, T0 + 30], [None, None], [T0 + 60, T0 + 60]]
    assert main(["replay", str(path), "--no-chart", "--out", str(tmp_path / "out")]) == 0
    assert json.loads((tmp_path / "out" / "replay.json").read_text())["span_s"] == 60.0
    assert capsys.readouterr().err.count(f"promptcache: warning: {warning}\n") == 1
