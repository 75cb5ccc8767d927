"""The shared Claude Code sessions of other people (``claude_code/`` and ``claude_code_ext/``, when the shared data
is present beside the checkout; skipped without it): every one replays, broken lines skipped; as-logged within 5 %
of the logged bill for every session of 20 or more calls replayed alone, within 3 % for one account's sessions
replayed in one run; a file given twice counts as once; the incremental prompt builder gives ``prompt_of``'s
prompts on every session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from shared_data import find_data_file  # noqa: E402

from promptcache._cli import main  # noqa: E402
from promptcache.replay import _claude_code  # noqa: E402
from promptcache.replay._claude_code_calls import prompt_of  # noqa: E402
from promptcache.replay._claude_code_walk import PromptWalker  # noqa: E402
from promptcache.replay._engine import run_replay  # noqa: E402
from promptcache.replay._readers import read_file  # noqa: E402
from promptcache.replay._skipped import SkippedLines, skipping  # noqa: E402

MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"
M_CLAUDE = ("21037e11", "3af9b1a7", "43391f62", "554b9fa6", "57bb5674", "95f81cf4", "abc757d1", "c10f5964", "ff59cfd2")
#: broken lines per m-claude session (counted with a JSON parser over the files)
BROKEN = {"21037e11": 28, "3af9b1a7": 35, "554b9fa6": 28, "57bb5674": 6, "95f81cf4": 13, "c10f5964": 5}


def _folder(name: str) -> Path:
    path = find_data_file(name, required=False)
    if path is None:
        pytest.skip(f"shared data {name} not present")
    return path


def _m_claude() -> list[Path]:
    folder = _folder("claude_code_ext/m-claude")
    return [next(folder.glob(f"{stem}-*.jsonl")) for stem in M_CLAUDE]


def _sessions() -> list[Path]:
    """Every session of the shared data, as a log and (where it has one) as its session folder."""
    out: list[Path] = []
    for name in ("claude_code", "claude_code_ext/m-claude", "claude_code_ext/session-share"):
        folder = find_data_file(name, required=False)
        if folder is None:
            continue
        out += sorted(folder.glob("*-*-*-*-*.jsonl")) + sorted(p for p in folder.iterdir() if p.is_dir())
    return out


def test_every_ext_session_replays_with_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ext = _folder("claude_code_ext")
    out = tmp_path / "out"
    assert main(["replay", str(ext / "m-claude"), str(ext / "session-share"), "--out", str(out), "--no-chart"]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if line]  # the progress bar leaves a blank line
    assert len(err) == 1 and err[0].startswith(f"promptcache: warning: {ext / 'm-claude'}/21037e11")
    assert f"skipped {sum(BROKEN.values())} lines that are not valid JSON in 6 files" in err[0]


@pytest.mark.parametrize("stem", M_CLAUDE)
def test_broken_lines_are_skipped_and_counted(stem: str) -> None:
    [path] = [p for p in _m_claude() if p.name.startswith(stem)]
    result = run_replay([path], MODEL, ["none"], combined=False)
    assert result.skipped.count == BROKEN.get(stem, 0)
    assert result.requests == result.logged_requests > 0


def test_as_logged_within_5_percent_for_every_session_of_20_calls_alone() -> None:
    sessions = _sessions()
    if not sessions:
        pytest.skip("shared Claude Code sessions not present")
    errors: dict[str, float] = {}
    for path in sessions:
        result = run_replay([path], MODEL, ["none"], combined=False)
        fid = result.fidelity
        assert fid is not None and fid.cost_difference is not None
        if fid.calls >= 20:
            errors[f"{path.parent.name}/{path.name}"] = fid.cost_difference
    assert len(errors) == 14
    # session-share 0ccf1a04's main thread reads three cached lengths of its unlogged prefix (10,467 / 13,681 /
    # 18,277 tokens): each is a level of the hidden prefix (promptcache.replay._sizes.hidden_levels)
    assert {k for k, e in errors.items() if abs(e) > 0.05} == set(), errors


def test_one_accounts_sessions_in_one_run_within_3_percent() -> None:
    paths = _m_claude()
    result = run_replay(paths, MODEL, ["none"], combined=False)
    fid = result.fidelity
    assert fid is not None and fid.cost_difference is not None and abs(fid.cost_difference) <= 0.03
    assert result.late_conversations == 0 and result.requests == 817


def test_the_same_files_twice_give_the_same_requests() -> None:
    paths = _m_claude()[:3]
    once = run_replay(paths, MODEL, ["none"], combined=False)
    twice = run_replay([*paths, *paths], MODEL, ["none"], combined=False)
    assert twice.requests == once.requests and len(twice.merged.repeated_files) == 3
    assert twice.fidelity is not None and once.fidelity is not None
    assert twice.fidelity.logged_usd == once.fidelity.logged_usd


def test_the_incremental_prompts_are_prompt_ofs(monkeypatch: pytest.MonkeyPatch) -> None:
    fixtures = Path(__file__).resolve().parents[1] / "data" / "claude_code"
    paths = [*_sessions(), *sorted(fixtures.glob("*.jsonl")), fixtures / "folder-session"]
    sessions: list[_claude_code.Session] = []
    build = _claude_code._conversations
    monkeypatch.setattr(_claude_code, "_conversations", lambda s, n: sessions.append(s) or build(s, n))
    with skipping(SkippedLines()):
        for path in paths:
            read_file(path)
    calls = 0
    for session in sessions:
        walker, mine, theirs = PromptWalker(session, {}), {}, {}
        walker.replies = mine
        for lines in sorted(session.calls.values(), key=lambda ls: (ls[0].file, ls[0].line)):
            keys, messages, start = walker.prompt(lines[0])
            ref_keys, ref_messages, ref_start = prompt_of(session, lines[0], theirs)
            assert (keys, start) == (ref_keys, ref_start)
            assert [(m.role, m.blocks, m.timestamp) for m in messages] == [
                (m.role, m.blocks, m.timestamp) for m in ref_messages
            ]
            calls += 1
    assert calls > 1_500 or not _sessions()
