"""What the command prints, held to its documentation and to a clean stderr: docs/replay.md's sample report is the
command's output line for line; off a terminal, a run long enough for the progress bar leaves nothing on stderr; a
directory holding no Claude Code session says what a directory must hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import PROGRESS_MIN_REQUESTS, main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "data" / "sample_conversations.json"
MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"


@pytest.fixture(autouse=True)
def _docs_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented samples are printed at 120 columns (the report wraps to the terminal's width)."""
    monkeypatch.setenv("COLUMNS", "120")


def _docs_sample() -> list[str]:
    page = (ROOT / "docs" / "replay.md").read_text()
    block = page.split("```\nSwitch to anchored-tail", 1)[1].split("```", 1)[0]
    return ("Switch to anchored-tail" + block).rstrip("\n").splitlines()


def test_the_docs_sample_is_what_the_command_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(SAMPLE), "--model", MODEL, "--out", str(tmp_path), "--no-chart"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    documented = _docs_sample()
    assert documented[-1].startswith("wrote promptcache-replay/replay.json, promptcache-replay/replay.png (")
    assert printed[-1].startswith(f"wrote {tmp_path / 'replay.json'} (")  # the path and the time differ
    assert printed[:-1] == documented[:-1]


def test_a_long_run_off_a_terminal_leaves_stderr_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conversations = [
        {
            "id": f"c{i}",
            "messages": [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": "ok"}],
        }
        for i in range(PROGRESS_MIN_REQUESTS + 20)
    ]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(conversations))
    code = main(["replay", str(path), "--model", MODEL, "--strategy", "anchored-tail", "--out", str(tmp_path / "o"),
                 "--no-chart"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0 and "320 requests" in captured.out
    assert captured.err == ""  # no progress bar, and no blank line it would leave


@pytest.mark.parametrize("holds", [[], ["notes.txt"]], ids=["empty", "no-log"])
def test_a_directory_without_sessions_says_what_it_must_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], holds: list[str]
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    for name in holds:
        (folder / name).write_text("hi")
    assert main(["replay", str(folder), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        f"promptcache: error: {folder}: is a directory holding no Claude Code sessions: a directory is read only as "
        "Claude Code sessions, a folder of project folders (~/.claude/projects, every session of every project in "
        "one run), one project folder (session logs <id>.jsonl, as in ~/.claude/projects/<project>/) or one "
        "session's folder (<id>/ beside <id>.jsonl, or holding subagents/agent-*.jsonl)\n"
    )


def test_the_readme_sample_names_the_line_under_the_decision() -> None:
    from promptcache.replay._decision import decide
    from promptcache.replay._engine import DEFAULT_STRATEGIES, run_replay

    decision = decide(run_replay([str(SAMPLE)], MODEL, DEFAULT_STRATEGIES, force_model=True))
    assert decision is not None and len(decision.advice) == 1
    assert decision.advice[0].startswith("anchored-tail+response-cache (18.3% of no caching) is cheaper but is not")
    section = (ROOT / "README.md").read_text().split("## The replay table", 1)[1].split("\n## ", 1)[0]
    assert "a line on why the cheaper anchored-tail+response-cache row is not it" in " ".join(section.split())


def test_the_docs_claude_code_sample_is_what_the_command_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from shared_data import find_data_file

    folder = find_data_file("claude_code/258c7280-ae70-4798-800f-63464d01a85d", required=False)
    if folder is None:
        pytest.skip("shared data claude_code/258c7280-ae70-4798-800f-63464d01a85d not present")
    assert main(["replay", str(folder), "--out", str(tmp_path), "--no-chart"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    page = (ROOT / "docs" / "replay.md").read_text()
    block = page.split("```\nKeep what you have: Claude Code places", 1)[1].split("```", 1)[0]
    documented = ("Keep what you have: Claude Code places" + block).rstrip("\n").splitlines()
    assert printed[: len(documented)] == documented
    assert documented[-1].endswith("(156 requests over 70 minutes; a month at that rate = x620.7).")
