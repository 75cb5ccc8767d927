"""OpenAI and Langfuse call logs whose usage is not token counts (a negative, a string, a number past 2**63, a
cached part larger than the prompt): the record is read without its usage and counted in the skipped-lines tally
with its reason, as Claude Code logs are; under ``--strict`` it is an error naming the file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import main
from promptcache.replay._readers import read_file
from promptcache.replay._skipped import SkippedLines, skipping
from promptcache.replay._transcript import Conversation, TranscriptError, Usage

DATA = Path(__file__).resolve().parents[1] / "data" / "call_logs"
OPENAI = DATA / "openai_bad_usage.jsonl"
LANGFUSE = DATA / "langfuse_bad_usage.json"


def _usages(conversations: list[Conversation]) -> list[Usage | None]:
    return [c.messages[i].usage for c in conversations for i in c.request_ends()]


def _one_line(path: Path, line: int, tmp_path: Path) -> Path:
    """The file made of line ``line`` of ``path`` alone."""
    out = tmp_path / f"line{line}.jsonl"
    out.write_text(path.read_text().splitlines()[line - 1] + "\n")
    return out


def test_openai_records_with_bad_usage_keep_none_and_are_counted() -> None:
    with skipping(SkippedLines()) as tally:
        conversations = read_file(OPENAI)
    assert _usages(conversations) == [None, None, None, None]
    assert (tally.count, tally.bad_usage, tally.bad_usage_first) == (0, 4, f"{OPENAI}:1")
    assert (
        tally.bad_usage_reason
        == "response.usage.prompt_tokens must be a token count (an integer from 0 to 4,294,967,295), got -100"
    )


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (1, "response.usage.prompt_tokens must be a token count (an integer from 0 to 4,294,967,295), got -100"),
        (2, "response.body.usage.prompt_tokens must be a token count (an integer from 0 to 4,294,967,295), got '100'"),
        (
            3,
            "response.usage.input_tokens must be a token count (an integer from 0 to 4,294,967,295), got 1e+40",
        ),  # read as a float
        (
            4,
            "response.usage.prompt_tokens_details.cached_tokens (1000) exceeds response.usage.prompt_tokens (10): "
            "the cached part is part of the prompt",
        ),
    ],
)
def test_each_bad_openai_usage_is_named_with_its_field(line: int, reason: str, tmp_path: Path) -> None:
    path = _one_line(OPENAI, line, tmp_path)
    with skipping(SkippedLines()) as tally:
        assert _usages(read_file(path)) == [None]
    assert (tally.bad_usage, tally.bad_usage_first, tally.bad_usage_reason) == (1, f"{path}:1", reason)
    with pytest.raises(TranscriptError) as err:
        read_file(path)
    assert str(err.value) == f"{path}:1: {reason}"


def test_langfuse_generations_with_bad_usage_keep_none_and_the_good_one_is_read() -> None:
    with skipping(SkippedLines()) as tally:
        agent, other = read_file(LANGFUSE)
    assert _usages([agent]) == [None, None]
    assert _usages([other]) == [Usage(1076, 1024, 0, 0, 5)]
    assert (tally.bad_usage, tally.bad_usage_first) == (2, f"{LANGFUSE}:15")
    assert (
        tally.bad_usage_reason
        == "usageDetails.input must be a token count (an integer from 0 to 4,294,967,295), got -50"
    )


def test_langfuse_strict_names_the_file_line_and_field() -> None:
    with pytest.raises(TranscriptError) as err:
        read_file(LANGFUSE)
    assert str(err.value) == (
        f"{LANGFUSE}:15: usageDetails.input must be a token count (an integer from 0 to 4,294,967,295), got -50"
    )


def test_the_command_warns_once_and_counts_only_the_readable_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(LANGFUSE), "--no-chart", "--out", str(tmp_path / "o")]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("promptcache:")]
    assert err == [
        f"promptcache: warning: {LANGFUSE}:15: read 2 lines without their usage, which is not token counts (first "
        "here: usageDetails.input must be a token count (an integer from 0 to 4,294,967,295), got -50); use --strict to stop at the "
        "first one"
    ]
    result = json.loads((tmp_path / "o" / "replay.json").read_text())
    assert (result["as_logged"]["logged_requests"], result["as_logged"]["requests"]) == (1, 3)
    assert main(["replay", str(LANGFUSE), "--no-chart", "--strict", "--out", str(tmp_path / "s")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"promptcache: error: {LANGFUSE}:15: usageDetails.input must be a token count (an integer from 0 to 4,294,967,295), got -50"
    )
    assert not (tmp_path / "s").exists()
