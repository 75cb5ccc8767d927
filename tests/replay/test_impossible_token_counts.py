"""A logged token count no call could have (2**32 or more: thousands of times the largest context window) is
refused while the log is read, naming the file and line, in every log format; replay.json is never reached with a
total its JSON writer cannot hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from promptcache._cli import main

DATA = Path(__file__).parent.parent / "data"
HUGE = 2**63 - 1

CASES = [
    ("call_logs/anthropic_batch_results.jsonl", r'"input_tokens": *\d+'),
    ("call_logs/langsmith_runs.jsonl", r'"input_tokens": *\d+'),
    ("call_logs/openai_proxy.jsonl", r'"prompt_tokens": *\d+'),
    ("bedrock_logs/converse.jsonl", r'"inputTokens": *\d+'),
    ("claude_code/rewind.jsonl", r'"output_tokens": *\d+'),
]


@pytest.mark.parametrize(("name", "field"), CASES)
def test_huge_count_refused_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, field: str
) -> None:
    text = (DATA / name).read_text(encoding="utf-8")
    match = re.search(field, text)
    assert match is not None
    key = match.group(0).split(":")[0]
    path = tmp_path / Path(name).name
    path.write_text(text[: match.start()] + f"{key}: {HUGE}" + text[match.end() :], encoding="utf-8")
    line = text[: match.start()].count("\n") + 1
    code = main(["replay", str(path), "--out", str(tmp_path / "out"), "--no-chart", "--strict"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith(f"promptcache: error: {path}:{line}: "), err
    assert "must be a token count" in err, err
    assert not (tmp_path / "out").exists()
