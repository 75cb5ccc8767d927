"""A Claude Code log whose usage holds ``NaN`` (Python's ``json`` writes it; it is not JSON) keeps its lines: the
usage is left out and the warning names the field, the value and the line, instead of every such line being
skipped as broken (which left a log of such lines with "no API calls")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import main

DATA = Path(__file__).parents[1] / "data" / "claude_code" / "parallel_tools.jsonl"


def _with_nan(tmp_path: Path) -> tuple[Path, int]:
    lines, first = [], 0
    for lineno, text in enumerate(DATA.read_text().splitlines(), start=1):
        record = json.loads(text)
        message = record.get("message")
        if record.get("type") == "assistant" and isinstance(message, dict) and isinstance(message.get("usage"), dict):
            message["usage"]["input_tokens"] = float("nan")
            first = first or lineno
        lines.append(json.dumps(record))
    path = tmp_path / "nan.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path, first


def test_nan_usage_is_named_with_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, first = _with_nan(tmp_path)
    assert main(["replay", str(path), "--no-chart", "--out", str(tmp_path / "o")]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("promptcache:")]
    assert any(
        line.startswith(f"promptcache: warning: {path}:{first}: read ")
        and "message.usage.input_tokens must be a token count (an integer from 0 to 4,294,967,295), got 'NaN'" in line
        for line in err
    ), err
    assert not [line for line in err if "not valid JSON" in line or "no API calls" in line]
    report = json.loads((tmp_path / "o" / "replay.json").read_text())
    assert report["requests"] > 0
