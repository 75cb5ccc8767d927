"""Logged usage counts that are not token counts (a negative, a string, a fraction, 2**32 or more) are caught by
one check for every reader (``promptcache.replay._usage_checks.read_count``): TrafficRecorder recordings,
LangSmith runs, Anthropic batch results and Claude Code stream-json read the record without its usage and count it
in the skipped-lines tally with the field and value; under ``--strict`` it is an error naming the file and line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from promptcache._cli import main
from promptcache.replay._readers import read_file
from promptcache.replay._skipped import SkippedLines, skipping
from promptcache.replay._transcript import TranscriptError

DATA = Path(__file__).resolve().parents[1] / "data" / "call_logs"
SYSTEM = "You are a helpful assistant. " * 200

#: (log, the count field replaced in its first record that has one)
LOGS = [
    ("stream_json.jsonl", "cache_creation_input_tokens"),
    ("anthropic_batch_results.jsonl", "input_tokens"),
    ("langsmith_runs.jsonl", "input_tokens"),
]
#: (JSON text written for the count, how the message shows it)
BAD = [
    ("-14000", "-14000"),
    ('"3"', "'3'"),
    ("4.5", "4.5"),
    ("4294967296", "4294967296"),
    ("9223372036854775808", "9223372036854775808"),
    ("true", "true"),
]


def _recording(count: str) -> str:
    line = {
        "promptcache": "call", "version": 1, "id": "c0", "started": 1772442000, "ended": 1772442001,
        "thread_id": "t1", "user": None, "model": "scripted", "model_class": "FakeChatModel",
        "request": {"messages": [{"type": "system", "data": {"content": SYSTEM}},
                                 {"type": "human", "data": {"content": "q"}}], "tools": [], "settings": {}},
        "response": {"message": {"type": "ai", "data": {"content": "a"}},
                     "usage_metadata": {"input_tokens": 0, "output_tokens": 5, "total_tokens": 5}},
    }  # fmt: skip
    return json.dumps(line).replace('"input_tokens": 0', f'"input_tokens": {count}') + "\n"


def _broken(tmp_path: Path, log: str, key: str, count: str) -> tuple[Path, int]:
    """``log`` with the first ``key`` count replaced by ``count``; and the line it is on."""
    lines = (DATA / log).read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if re.search(rf'"{key}": *\d+', line))
    lines[at] = re.sub(rf'"{key}": *\d+', f'"{key}": {count}', lines[at], count=1)
    path = tmp_path / log
    path.write_text("".join(lines))
    return path, at + 1


@pytest.mark.parametrize(("count", "shown"), BAD)
@pytest.mark.parametrize(("log", "key"), LOGS)
def test_a_bad_count_drops_the_usage_with_one_tally_entry(
    log: str, key: str, count: str, shown: str, tmp_path: Path
) -> None:
    path, line = _broken(tmp_path, log, key, count)
    reason = f"{key} must be a token count (an integer from 0 to 4,294,967,295), got {shown}"
    with skipping(SkippedLines()) as tally:
        read_file(path)
    assert (tally.bad_usage, tally.bad_usage_first, tally.bad_usage_reason) == (1, f"{path}:{line}", reason)
    with pytest.raises(TranscriptError) as err:
        read_file(path)
    assert str(err.value) == f"{path}:{line}: {reason}"


@pytest.mark.parametrize(("count", "shown"), BAD)
def test_a_recording_with_a_bad_count_keeps_no_usage(count: str, shown: str, tmp_path: Path) -> None:
    path = tmp_path / "recording.jsonl"
    path.write_text(_recording(count))
    with skipping(SkippedLines()) as tally:
        (conv,) = read_file(path)
    assert [conv.messages[i].usage for i in conv.request_ends()] == [None]
    assert (tally.bad_usage, tally.bad_usage_first, tally.bad_usage_reason) == (
        1,
        f"{path}:1",
        f"input_tokens must be a token count (an integer from 0 to 4,294,967,295), got {shown}",
    )


def test_a_huge_stream_json_count_is_one_warning_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, line = _broken(tmp_path, "stream_json.jsonl", "cache_creation_input_tokens", "9223372036854775808")
    assert main(["replay", str(path), "--no-chart", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert (
        f"promptcache: warning: {path}:{line}: read 1 line without its usage, which is not token counts (first here: "
        "cache_creation_input_tokens must be a token count (an integer from 0 to 4,294,967,295), got 9223372036854775808); use --strict "
        "to stop at the first one"
    ) in err.splitlines()
    assert json.loads((tmp_path / "out" / "replay.json").read_text())["requests"] > 0
    assert main(["replay", str(path), "--no-chart", "--strict", "--out", str(tmp_path / "strict")]) == 2
