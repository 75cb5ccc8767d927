"""A Claude Code log where no call's ``usage`` is readable (every count is bad) is replayed as a log without usage:
the as-logged row is predicted from Claude Code's placement rules, and the decision, the anchored-tail comparison
and the JSON price that predicted row, as they do for a log that records no usage at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import main

DATA = Path(__file__).parents[1] / "data" / "claude_code" / "parallel_tools.jsonl"


def _rewrite(tmp_path: Path, name: str, bad: bool) -> Path:
    """``parallel_tools.jsonl`` with every assistant usage made unreadable (``bad``) or removed."""
    lines = []
    for text in DATA.read_text().splitlines():
        record = json.loads(text)
        message = record.get("message")
        if record.get("type") == "assistant" and isinstance(message, dict) and isinstance(message.get("usage"), dict):
            if bad:
                message["usage"].update(input_tokens=-5, cache_read_input_tokens=-5)
            else:
                del message["usage"]
        lines.append(json.dumps(record))
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _replay(tmp_path: Path, path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict, str, list[str]]:
    out = tmp_path / path.stem
    assert main(["replay", str(path), "--no-chart", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    err = [line for line in captured.err.splitlines() if line.startswith("promptcache:")]
    return json.loads((out / "replay.json").read_text()), captured.out, err


def test_a_log_whose_usage_is_all_unreadable_reads_as_a_log_without_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad, bad_out, bad_err = _replay(tmp_path, _rewrite(tmp_path, "usage_neg.jsonl", bad=True), capsys)
    none, none_out, _ = _replay(tmp_path, _rewrite(tmp_path, "usage_none.jsonl", bad=False), capsys)
    assert bad_err == [
        f"promptcache: warning: {tmp_path / 'usage_neg.jsonl'}:4: read 5 lines without their usage, which is not "
        "token counts (first here: message.usage.input_tokens must be a token count (an integer from 0 to 4,294,967,295), got -5); "
        "use --strict to stop at the first one"
    ]
    for result in (bad, none):
        assert result["as_logged_source"] == "predicted"
        assert result["as_logged"] is None  # no billed row, no fidelity
        as_logged = result["strategies"]["as-logged"]
        assert as_logged["cost_usd"] == 0.194724
        assert result["decision"]["current"] == "as-logged"
        assert result["decision"]["current_usd"] == as_logged["cost_usd"]
        # the Haiku call is a conversation of its own: staying on one model per conversation changes nothing
        assert result["decision"]["advice"][0].startswith("The as-logged row is predicted, not billed")
        assert result["decision"]["advice"][1].endswith(
            "; they are between conversations (another conversation's model cached the prefix), so one model per "
            "conversation would not avoid them."
        )
    for out in (bad_out, none_out):
        text = " ".join(out.split())
        assert "Claude Code places its own cache points (125.0% of no caching here as simulated)" in text
        assert "anchored-tail costs the same as the log's own layout (as-logged), both simulated." in text
        assert "100.0% less" not in text
