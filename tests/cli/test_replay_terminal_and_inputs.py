"""The command on a new user's first tries: the report wraps to the terminal's width without trailing spaces (the
fixes listed under the miss-cause table, not folded into a column), and piped (a log, CI) to ``COLUMNS`` or not at
all, so no table row is folded; a bare ``promptcache`` prints its help; a folder
of Claude Code project folders (``~/.claude/projects``) replays every session of every project in one run; a folder
without sessions gets a hint that fits what it holds; the help says "cache point"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from promptcache._cli import main

DATA = Path(__file__).resolve().parents[1] / "data"
OTEL = DATA / "call_logs" / "otel_genai.json"
CLAUDE = DATA / "claude_code"


@pytest.mark.parametrize("columns", [80, 100])
def test_the_report_fits_the_terminal_without_trailing_spaces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["replay", str(CLAUDE / "folder-session"), "--no-chart", "--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= columns
    assert [line for line in lines if line != line.rstrip()] == []
    assert not any("…" in line for line in lines)  # no figure or header cut short
    fixes = [line for line in lines if line.startswith("  [")]
    assert fixes and all(line.startswith(f"  [{i}] ") for i, line in enumerate(fixes, 1))


def test_a_narrow_terminal_shortens_token_counts_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["replay", str(CLAUDE / "parallel_tools.jsonl"), "--no-chart", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("strategy "))
    assert header.split() == ["strategy", "uncached", "read", "write", "1h", "USD", "vs", "none", "vs", "billed",
                              "w/read"]  # fmt: skip
    assert "Tokens in the table: k = thousand, M = million (rounded; exact in replay.json)." in out


def test_piped_output_without_columns_keeps_every_table_row_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # captured stdout is not a terminal
    assert main(["replay", str(CLAUDE / "parallel_tools.jsonl"), "--no-chart", "--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("┃ strategy"))
    assert [cell.strip() for cell in header.strip("┃").split("┃")] == [
        "strategy", "uncached input", "cache read", "cache write", "of which 1h", "USD (input side)", "vs none",
        "vs billed", "requests w/ read",
    ]  # fmt: skip
    rows = [line.split("│")[1].strip() for line in lines if line.startswith("│")]  # then the miss-cause row
    assert rows == ["none", "last-message", "langchain-aws", "multi-point", "anchored-tail", "as-logged",
                    "anchored-tail@1h", "as logged (billed)", "as-logged"]  # fmt: skip
    assert lines[0] == (
        "Keep what you have: Claude Code places its own cache points (36.9% of no caching here as simulated, 36.9% "
        "as billed) and they are not yours to change; what you can change is how you work (below)."
    )
    assert [line for line in lines if line != line.rstrip()] == []


def test_piped_output_honours_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    from io import StringIO

    from promptcache.replay._report_terminal import PIPED_WIDTH, terminal_console

    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal_console(StringIO()).width == PIPED_WIDTH == 10_000
    monkeypatch.setenv("COLUMNS", "132")
    assert terminal_console(StringIO()).width == 132
    monkeypatch.setenv("COLUMNS", "wide")  # not a number: as if unset
    assert terminal_console(StringIO()).width == PIPED_WIDTH


def test_a_bare_command_prints_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    out = capsys.readouterr().out
    assert out.startswith("usage: promptcache [-h] [--version] {replay,calibrate-intentions} ...")
    assert "replay" in out and "calibrate-intentions" in out


def test_the_help_says_cache_point(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "minimum tokens per cache point for every model" in help_text
    assert "checkpoint" not in help_text and "breakpoint" not in help_text


def _projects(root: Path) -> Path:
    """A ``~/.claude/projects`` of two project folders: one with a session and its folder, one with a log."""
    first, second = root / "-home-me-app", root / "-home-me-lib"
    first.mkdir(parents=True)
    second.mkdir()
    shutil.copy(CLAUDE / "folder-session.jsonl", first / "folder-session.jsonl")
    shutil.copytree(CLAUDE / "folder-session", first / "folder-session")
    shutil.copy(CLAUDE / "parallel_tools.jsonl", second / "parallel_tools.jsonl")
    (root / "notes").mkdir()  # not a project folder: left out
    return root


def test_a_folder_of_project_folders_replays_every_project_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _projects(tmp_path / "projects")
    counts = []
    for given in ([root], [root / "-home-me-app", root / "-home-me-lib"]):
        out = tmp_path / f"o{len(counts)}"
        assert main(["replay", *map(str, given), "--no-chart", "--out", str(out)]) == 0
        report = json.loads((out / "replay.json").read_text())
        counts.append((report["requests"], report["merged"]["project_folders"]))
    capsys.readouterr()
    (everything, folders), (by_project, named) = counts
    assert everything == by_project  # the same sessions, one cache timeline
    assert folders == [str(root / "-home-me-app"), str(root / "-home-me-lib")] == named


def test_a_folder_of_other_logs_is_told_to_give_its_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(OTEL, folder / "otel.json")
    assert main(["replay", str(folder), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        f"promptcache: error: {folder}: is a directory holding no Claude Code sessions: a directory is read only as "
        "Claude Code sessions, a folder of project folders (~/.claude/projects, every session of every project in "
        "one run), one project folder (session logs <id>.jsonl, as in ~/.claude/projects/<project>/) or one "
        f"session's folder (<id>/ beside <id>.jsonl, or holding subagents/agent-*.jsonl); for a log of another "
        f"format give its files (e.g. {folder}/*.json)\n"
    )
