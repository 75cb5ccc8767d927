"""How good is the as-logged row when the log records no usage? The prediction error per session.

Run by hand from the project root (figures go to bench/README.md, section "Replay: prediction without usage"):

    python bench/replay_prediction.py [SESSION.jsonl or SESSION_FOLDER ...]   # default: every shared session

For each session (a Claude Code ``.jsonl`` with its ``subagents/`` folder when there is one) it replays the log as
it is (the logged bill, input side: uncached input + cache reads + cache writes at each call's model's price) and a
copy with every ``usage`` object removed (made in a temporary folder). On the copy the ``as-logged`` row is priced
from Claude Code's placement rules (system/tools prefix + last message breakpoints, 5-minute TTL) on estimated
sizes (``promptcache.replay._tokens`` calibration; the unlogged prefix ``promptcache.replay._sizes``). Prints the
error per session, (predicted - logged) / logged, and pooled over all sessions.

``--out-of-sample``: the estimate's constants (the calibration ``promptcache.replay._tokens.CLAUDE`` and the unlogged
prefix sizes of ``promptcache.replay._sizes``) are measured again on one account's sessions and the others are
predicted with them, both ways: fitted on ``claude_code/`` (spotter), checked on ``claude_code_ext/`` (M-Claude,
session-share), and the reverse. The calibration is fitted as ``bench/token_estimate.py`` fits it (least squares
on the growth between consecutive logged calls, the sessions that read without broken lines); the prefix sizes are
each conversation's first logged prompt minus its visible messages (that calibration's estimate): the median over
main threads, the median over Task sub-agents, the mean over post-compaction conversations (the shipped value
when the fitting side has none).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import shutil
import statistics
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import orjson
from shared_data import find_data_file

from promptcache.replay import _sizes, _tokens
from promptcache.replay._engine import run_replay
from promptcache.replay._tokens import RAW, Calibration, TokenCounter
from promptcache.replay._transcript import Conversation, TranscriptError


def strip_usage(src: Path, dst: Path) -> None:
    """Copy a Claude Code log (a file, or a session folder's files) with every ``message.usage`` removed; lines that
    are not JSON are copied unchanged."""
    lines = []
    for raw in src.read_bytes().splitlines():
        try:
            rec: object = orjson.loads(raw)
        except orjson.JSONDecodeError:
            lines.append(raw)
            continue
        if isinstance(rec, dict) and isinstance(rec.get("message"), dict):
            rec["message"].pop("usage", None)
        lines.append(orjson.dumps(rec))
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(b"\n".join(lines) + b"\n")


def stripped_copy(session: Path, into: Path) -> Path:
    """A usage-free copy of ``session`` (``.jsonl``, plus its ``subagents/`` folder when present) under ``into``;
    returns what to replay: the folder when the session has one, else the file."""
    strip_usage(session, into / session.name)
    folder = session.with_suffix("")
    if (folder / "subagents").is_dir():
        for agent in sorted((folder / "subagents").glob("*.jsonl")):
            strip_usage(agent, into / folder.name / "subagents" / agent.name)
        return into / folder.name
    return into / session.name


def target(session: Path) -> Path:
    folder = session.with_suffix("")
    return folder if (folder / "subagents").is_dir() else session


def measure(session: Path, tmp: Path) -> tuple[int, float, float]:
    """(calls, logged USD, predicted as-logged USD) of one session."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real = run_replay([target(session)], "claude-sonnet-4-5", ["none"], combined=False)
        bare = run_replay([stripped_copy(session, tmp)], "claude-sonnet-4-5", ["none"], combined=False)
    assert real.logged is not None and bare.as_logged_source == "predicted"
    return real.logged.requests, real.logged.cost_usd, bare.strategies["as-logged"].cost_usd


GROUPS = {
    "claude_code": ("claude_code",),
    "claude_code_ext": ("claude_code_ext/m-claude", "claude_code_ext/session-share"),
}


def _group_sessions(group: str) -> list[Path]:
    found: list[Path] = []
    for name in GROUPS[group]:
        folder = find_data_file(name, required=False)
        if folder is not None:
            found += sorted(p for p in folder.glob("*.jsonl") if len(p.stem) == 36)
    return found


def fit_constants(sessions: list[Path]) -> tuple[Calibration, dict[str, int]]:
    """The calibration and the three unlogged-prefix sizes measured on ``sessions`` (module docstring)."""
    from token_estimate import _fit, _rows

    from promptcache.replay._readers import read_conversations
    from promptcache.replay._skipped import SkippedLines, skipping

    raw = TokenCounter(RAW)
    clean: list[list[Conversation]] = []
    everything: list[Conversation] = []
    for session in sessions:
        skipped = SkippedLines()
        with skipping(skipped):
            convs = read_conversations([target(session)])
        everything += convs
        if not skipped.count:
            clean.append(convs)
    rows = [_rows(convs, raw) for convs in clean]
    text, result, block = _fit(np.vstack([r[0] for r in rows]), np.concatenate([r[1] for r in rows]))
    calibration = Calibration("claude-fit", round(text, 3), round(text, 3), round(result, 3), round(block))
    counter = TokenCounter(calibration)
    sizes: dict[str, list[int]] = {"main": [], "subagent": [], "compacted": []}
    for conv in everything:
        logged = [c for c in conv.request_ends() if conv.messages[c].usage is not None]
        if not logged or conv.meta.get("format") != "claude-code":
            continue
        usage = conv.messages[logged[0]].usage
        assert usage is not None
        visible = sum(counter.block(b) for m in conv.messages[: logged[0]] for b in m.blocks)
        agent = str(conv.meta.get("agent") or "")
        kind = "subagent" if agent and not agent.startswith("agent-acompact") else "main"
        kind = "compacted" if kind == "main" and conv.meta.get("context_start") == "compact_boundary" else kind
        if kind == "main" and conv.meta.get("context_start") not in (None, "session"):
            continue  # a conversation that starts inside another one's history (a compaction call)
        sizes[kind].append(usage.prompt_tokens - visible)
    shipped = {
        "main": _sizes.CLAUDE_CODE_CONTEXT_TOKENS,
        "subagent": _sizes.CLAUDE_CODE_SUBAGENT_TOKENS,
        "compacted": _sizes.CLAUDE_CODE_COMPACTED_TOKENS,
    }
    measured = {
        kind: (round(statistics.mean(v) if kind == "compacted" else statistics.median(v)) if v else shipped[kind])
        for kind, v in sizes.items()
    }
    return calibration, measured


@contextlib.contextmanager
def constants(calibration: Calibration, prefix: dict[str, int]) -> Iterator[None]:
    """The replay's estimate with ``calibration`` and these unlogged-prefix sizes, for the duration."""
    saved = (_tokens.CLAUDE, _sizes.CLAUDE_CODE_CONTEXT_TOKENS, _sizes.CLAUDE_CODE_SUBAGENT_TOKENS)
    saved_compacted = _sizes.CLAUDE_CODE_COMPACTED_TOKENS
    _tokens.CLAUDE = dataclasses.replace(calibration, name="claude")
    _sizes.CLAUDE_CODE_CONTEXT_TOKENS = prefix["main"]
    _sizes.CLAUDE_CODE_SUBAGENT_TOKENS = prefix["subagent"]
    _sizes.CLAUDE_CODE_COMPACTED_TOKENS = prefix["compacted"]
    try:
        yield
    finally:
        _tokens.CLAUDE, _sizes.CLAUDE_CODE_CONTEXT_TOKENS, _sizes.CLAUDE_CODE_SUBAGENT_TOKENS = saved
        _sizes.CLAUDE_CODE_COMPACTED_TOKENS = saved_compacted


def _table(sessions: list[Path]) -> None:
    total_logged = total_predicted = 0.0
    print("| session | calls | logged USD | predicted as-logged USD | error |")
    print("|---|---|---|---|---|")
    for session in sessions:
        tmp = Path(tempfile.mkdtemp(prefix="promptcache-predict-"))
        try:
            calls, logged, predicted = measure(session, tmp)
        except TranscriptError as exc:  # a log this version cannot read
            print(f"| {session.stem[:8]} | not read: {str(exc)[-60:]} | | | |")
            continue
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        total_logged += logged
        total_predicted += predicted
        print(f"| {session.stem[:8]} | {calls} | {logged:.4f} | {predicted:.4f} | {predicted / logged - 1:+.1%} |")
    print(f"| pooled | | {total_logged:.4f} | {total_predicted:.4f} | {total_predicted / total_logged - 1:+.1%} |")


def out_of_sample() -> None:
    """Fit on one account's sessions, predict the others, both ways (module docstring)."""
    for fit_on, check_on in (("claude_code", "claude_code_ext"), ("claude_code_ext", "claude_code")):
        calibration, prefix = fit_constants(_group_sessions(fit_on))
        print(
            f"fitted on {fit_on}/: text + tool args {calibration.text}, tool results {calibration.tool_result}, "
            f"{calibration.tool_block_overhead} tokens per tool block; unlogged prefix: main thread "
            f"{prefix['main']:,}, sub-agent {prefix['subagent']:,}, after a compaction {prefix['compacted']:,}; "
            f"checked on {check_on}/:"
        )
        with constants(calibration, prefix):
            _table(_group_sessions(check_on))
        print()


def default_sessions() -> list[Path]:
    found: list[Path] = []
    for name in ("claude_code", "claude_code_ext/m-claude", "claude_code_ext/session-share"):
        folder = find_data_file(name, required=False)
        if folder is not None:
            found += sorted(p for p in folder.glob("*.jsonl") if len(p.stem) == 36)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sessions", nargs="*", type=Path)
    parser.add_argument("--out-of-sample", action="store_true", help="fit on one account, check on the others")
    args = parser.parse_args(argv)
    if args.out_of_sample:
        out_of_sample()
        return 0
    sessions = args.sessions or default_sessions()
    if not sessions:
        print("no Claude Code sessions found (see bench/shared_data.py)", file=sys.stderr)
        return 2
    _table(sessions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
