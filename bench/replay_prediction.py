"""How good is the as-logged row when the log records no usage? The prediction error per session.

Run by hand from the project root (figures go to bench/README.md, section "Replay: prediction without usage"):

    python bench/replay_prediction.py [SESSION.jsonl or SESSION_FOLDER ...]   # default: every shared session

For each session (a Claude Code ``.jsonl`` with its ``subagents/`` folder when there is one) it replays the log as
it is (the logged bill, input side: uncached input + cache reads + cache writes at each call's model's price) and a
copy with every ``usage`` object removed (made in a temporary folder). On the copy the ``as-logged`` row is priced
from Claude Code's placement rules (system/tools prefix + last message breakpoints, 5-minute TTL) on estimated
sizes (``promptcache.replay._tokens`` calibration; the unlogged prefix ``promptcache.replay._sizes``). Prints the
error per session, (predicted - logged) / logged, and pooled over all sessions.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import orjson
from shared_data import find_data_file

from promptcache.replay._engine import run_replay
from promptcache.replay._transcript import TranscriptError


def strip_usage(src: Path, dst: Path) -> None:
    """Copy a Claude Code log (a file, or a session folder's files) with every ``message.usage`` removed; lines that
    are not JSON are copied unchanged."""
    lines = []
    for raw in src.read_bytes().splitlines():
        try:
            rec: Any = orjson.loads(raw)
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
    args = parser.parse_args(argv)
    sessions = args.sessions or default_sessions()
    if not sessions:
        print("no Claude Code sessions found (see bench/shared_data.py)", file=sys.stderr)
        return 2
    total_logged = total_predicted = 0.0
    print("| session | calls | logged USD | predicted as-logged USD | error |")
    print("|---|---|---|---|---|")
    for session in sessions:
        tmp = Path(tempfile.mkdtemp(prefix="promptcache-predict-"))
        try:
            calls, logged, predicted = measure(session, tmp)
        except TranscriptError as exc:  # a log this version cannot read (broken lines)
            print(f"| {session.stem[:8]} | not read: {str(exc)[-60:]} | | | |")
            continue
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        total_logged += logged
        total_predicted += predicted
        print(f"| {session.stem[:8]} | {calls} | {logged:.4f} | {predicted:.4f} | {predicted / logged - 1:+.1%} |")
    print(f"| pooled | | {total_logged:.4f} | {total_predicted:.4f} | {total_predicted / total_logged - 1:+.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
