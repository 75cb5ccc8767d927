"""The intention replay's share of replaying one long Claude Code conversation, measured inside one process.

Run by hand from the project root (figures go to bench/README.md, section "Replay: one long conversation"):

    python bench/replay_intention_share.py [--calls 1000 2000]

bench/replay_scale.py's made-up conversation of ``--calls`` calls (written to a temporary directory) is replayed
with ``run_replay`` (default strategies, the combined row); the CPU seconds spent in ``IntentionReplay.feed`` are
summed apart from the whole replay's (``time.process_time``; the modules the replay loads before the first request
are not counted, the intention library's load on the first call is). CPU time rather than wall time: the figures
stay readable on a machine shared with other jobs. The intention figures are printed to check they do not change.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from replay_scale import _claude_code_session

from promptcache.replay._engine import run_replay
from promptcache.replay._intentions import IntentionReplay


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, nargs="+", default=[1000, 2000])
    args = parser.parse_args()
    spent = [0.0]
    feed = IntentionReplay.feed

    def timed(self: IntentionReplay, request: Any) -> None:
        started = time.process_time()
        try:
            feed(self, request)
        finally:
            spent[0] += time.process_time() - started

    IntentionReplay.feed = timed  # type: ignore[method-assign]
    print("| calls | intention replay, CPU s | whole replay, CPU s | exact / stored / listed results |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for calls in args.calls:
            path = _claude_code_session(calls, Path(tmp) / f"cc_{calls}.jsonl")
            spent[0] = 0.0
            started = time.process_time()
            result = run_replay([path], "anthropic.claude-sonnet-4-20250514-v1:0")
            whole = time.process_time() - started
            stats = result.intention
            print(f"| {calls:,} | {spent[0]:.2f} | {whole:.2f} | {stats.exact:,} / {stats.stored:,} / "
                  f"{stats.listed_results:,} |")  # fmt: skip
            path.unlink()


if __name__ == "__main__":
    main()
