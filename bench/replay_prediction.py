"""How good is the as-logged row when the log records no usage? The prediction error per session.

Run by hand from the project root (figures go to bench/README.md, section "Replay: prediction without usage"):

    python bench/replay_prediction.py [SESSION.jsonl or SESSION_FOLDER ...]   # default: every shared session

For each session (a Claude Code ``.jsonl`` with its ``subagents/`` folder when there is one) it replays the log as
it is (the logged bill, input side: uncached input + cache reads + cache writes at each call's model's price) and a
copy with every ``usage`` object removed (made in a temporary folder). On the copy the ``as-logged`` row is priced
from Claude Code's placement rules (system/tools prefix + last message breakpoints, 5-minute TTL) on estimated
sizes (``promptcache.replay._tokens`` calibration; the unlogged prefix ``promptcache.replay._sizes``). Prints the
error per session, (predicted - logged) / logged, and pooled over all sessions, four ways: each session replayed
alone at Claude Code's default 5-minute TTL and at 1 hour (the row's ``as-logged@1h`` variant: the transcript does
not say which TTL the account gets), and the sessions of one data folder (one account) replayed in one run on one
cache timeline, each request's cost to its session (``meta["session_id"]``), at both TTLs.

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

from promptcache.replay import _run, _sizes, _tokens
from promptcache.replay._engine import run_replay
from promptcache.replay._prepare import Request
from promptcache.replay._tokens import RAW, Calibration, TokenCounter
from promptcache.replay._transcript import Conversation, TranscriptError
from promptcache.replay._variants import ONE_HOUR


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


@dataclasses.dataclass
class Measured:
    """One session's figures, USD (input side): the logged bill, and the predicted ``as-logged`` row replayed
    alone at 5 minutes (Claude Code's default TTL) and at 1 hour (its ``as-logged@1h`` variant), and replayed with
    the account's other sessions on one cache timeline (5 minutes)."""

    calls: int
    logged: float
    alone: float
    alone_1h: float
    account: float = float("nan")
    account_1h: float = float("nan")


def measure(session: Path, tmp: Path) -> Measured:
    """The logged bill and the predicted as-logged row (replayed alone) of one session."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real = run_replay([target(session)], "claude-sonnet-4-5", ["none"], combined=False)
        bare = run_replay([stripped_copy(session, tmp)], "claude-sonnet-4-5", ["none"], combined=False)
    assert real.logged is not None and bare.as_logged_source == "predicted"
    one_hour = bare.variants.get("as-logged" + ONE_HOUR, bare.strategies["as-logged"])
    return Measured(
        real.logged.requests, real.logged.cost_usd, bare.strategies["as-logged"].cost_usd, one_hour.cost_usd
    )


def measure_account(sessions: list[Path], tmp: Path) -> dict[str, tuple[float, float]]:
    """Session id -> (predicted as-logged USD at 5 minutes, at 1 hour) with every session of ``sessions`` (one
    account's) replayed in one run from usage-free copies in one folder: one cache timeline, as the provider keeps
    it for the account. Each request's cost goes to its session (``meta["session_id"]``)."""
    folder = tmp / "account"
    for session in sessions:
        stripped_copy(session, folder)
    per: dict[str, list[float]] = {}
    original = _run.Run.replay

    def replay(run: _run.Run, request: Request, progress: object) -> None:
        names = ("as-logged", "as-logged" + ONE_HOUR)
        rows = (run.totals.get(names[0]), run.variants.totals.get(names[1]))
        before = [row.cost_usd if row else 0.0 for row in rows]
        original(run, request, progress)  # type: ignore[arg-type]
        rows = (run.totals.get(names[0]), run.variants.totals.get(names[1]))
        sid = str(request.prepared.conversation.meta.get("session_id"))
        got = per.setdefault(sid, [0.0, 0.0])
        for k, row in enumerate(rows):
            got[k] += (row.cost_usd if row else 0.0) - before[k]

    _run.Run.replay = replay  # type: ignore[method-assign]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run_replay([folder], "claude-sonnet-4-5", ["none"], combined=False)
    finally:
        _run.Run.replay = original  # type: ignore[method-assign]
    return {sid: (a, b) for sid, (a, b) in per.items()}


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
    calibration = dataclasses.replace(_tokens.CLAUDE, name="claude-fit")  # no clean session: the shipped one
    if rows:
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


def _err(predicted: float, logged: float) -> str:
    return f"{predicted / logged - 1:+.1%}"


def _table(sessions: list[Path]) -> None:
    """Per session: logged, predicted alone (5 min, 1 h), predicted on the account's timeline (5 min, 1 h)."""
    rows: list[tuple[Path, Measured]] = []
    for session in sessions:
        tmp = Path(tempfile.mkdtemp(prefix="promptcache-predict-"))
        try:
            rows.append((session, measure(session, tmp)))
        except TranscriptError as exc:  # a log this version cannot read
            print(f"| {session.stem[:8]} | not read: {str(exc)[-60:]} |")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    accounts: dict[Path, list[Path]] = {}
    for session, _ in rows:
        accounts.setdefault(session.parent, []).append(session)
    for members in accounts.values():
        tmp = Path(tempfile.mkdtemp(prefix="promptcache-predict-"))
        try:
            shared = measure_account(members, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for session, m in rows:
            if session in members:
                m.account, m.account_1h = shared.get(session.stem, (float("nan"), float("nan")))
    print(
        "| session | calls | logged USD | predicted alone, 5 min | error | 1 h | error | "
        "account timeline, 5 min | error | 1 h | error |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    total = Measured(0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for session, m in [*rows, (Path("pooled"), total)]:
        if m is not total:
            for f in ("calls", "logged", "alone", "alone_1h", "account", "account_1h"):
                setattr(total, f, getattr(total, f) + getattr(m, f))
        calls = "" if m is total else str(m.calls)
        print(
            f"| {session.stem[:8]} | {calls} | {m.logged:.4f} | {m.alone:.4f} | {_err(m.alone, m.logged)} | "
            f"{m.alone_1h:.4f} | {_err(m.alone_1h, m.logged)} | {m.account:.4f} | {_err(m.account, m.logged)} | "
            f"{m.account_1h:.4f} | {_err(m.account_1h, m.logged)} |"
        )


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
