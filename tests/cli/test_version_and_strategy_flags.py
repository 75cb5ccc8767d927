"""CLI papercuts: ``promptcache --version``; ``--strategy`` repeatable and no longer swallowing FILE; singular and
plural counts in the printed report."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

import promptcache
from promptcache._cli import main
from promptcache.replay._engine import run_replay
from promptcache.replay._report import render_table

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "sample_conversations.json"


def test_version_flag_prints_the_distribution_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"promptcache {importlib.metadata.version('promptcache')}\n"
    assert promptcache.__version__ == importlib.metadata.version("promptcache")


def test_version_flag_through_python_dash_m() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "promptcache", "--version"], capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"promptcache {promptcache.__version__}\n", "")


def test_strategy_repeated_before_file(tmp_path: Path) -> None:
    argv = ["replay", "--strategy", "anchored-tail", "--strategy", "multi-point", str(SAMPLE), "--no-chart"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "replay.json").read_text())
    assert report["files"] == [str(SAMPLE)]
    assert list(report["strategies"]) == ["none", "anchored-tail", "multi-point", "anchored-tail+response-cache"]


def test_one_strategy_before_file_does_not_swallow_it(tmp_path: Path) -> None:
    assert main(["replay", "--strategy", "last-message", str(SAMPLE), "--no-chart", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "replay.json").read_text())
    assert (report["files"], list(report["strategies"])) == ([str(SAMPLE)], ["none", "last-message"])


def test_two_names_after_one_option_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["replay", str(SAMPLE), "--strategy", "last-message", "multi-point", "--out", str(tmp_path)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("promptcache: error: unrecognized arguments: multi-point")


def _conversation(path: Path) -> Path:
    call = {"type": "function", "function": {"name": "get_order", "arguments": '{"id": 7}'}}
    messages = [
        {"role": "system", "content": "You help."},
        {"role": "user", "content": "What is order 7's status?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "t1", **call}]},
        {"role": "tool", "tool_call_id": "t1", "content": "shipped"},
        {"role": "assistant", "content": "Shipped."},
        {"role": "user", "content": "And now, where is it?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "t2", **call}]},
        {"role": "tool", "tool_call_id": "t2", "content": "shipped"},
        {"role": "assistant", "content": "Still shipped."},
    ]
    path.write_text(json.dumps({"id": "c1", "user_id": "u1", "messages": messages}))
    return path


def _printed(files: list[str]) -> str:
    console = Console(record=True, width=400)
    render_table(run_replay(files, "anthropic.claude-sonnet-4-20250514-v1:0", ["none"]), console)
    return " ".join(console.export_text().split())


def test_counts_of_one_are_singular(tmp_path: Path) -> None:
    text = _printed([str(_conversation(tmp_path / "one.json"))])
    assert "1 call repeats an earlier successful call of the same user" in text
    assert "(exact repeat within 300 s; 0 repeats at any distance)" in text


def test_counts_above_one_are_plural() -> None:
    text = _printed([str(SAMPLE)])
    assert "3 calls repeat an earlier successful call of the same user" in text
    assert "(exact repeat within 300 s; 1 repeat at any distance)" in text
