"""Replay of a Claude Code log whose records are in reverse order: reading it, and the whole replay.

Run by hand from the project root (figures go to bench/README.md, section "Replay: hostile input"):

    python bench/replay_hostile_order.py [--records 600 2000] [--read-only]

The log is bench/replay_scale.py's made-up Claude Code conversation (one growing thread of user request, assistant
line with a tool use, tool result), cut to the first ``--records`` records and written in reverse order to a
temporary directory. Read in that order every call's prompt is an earlier call's history cut short, so every call
starts a conversation repeating the earlier ones: n calls give n conversations of up to 2n messages (the reader's
output, and the replay's work, grow as n²). Each run is a child process (``python -c``): ``read`` is the reader
alone (``read_file``, its CPU seconds), ``replay`` the whole replay as bench/replay_scale.py runs it (wall / CPU
seconds, peak RSS).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from replay_scale import _claude_code_session, _run

_READ = """
import sys, time
from pathlib import Path
from promptcache.replay._readers import read_file
started = time.process_time()
convs = read_file(Path(sys.argv[1]))
print(f"{len(convs):,} conversations, {sum(len(c.messages) for c in convs):,} messages, "
      f"{time.process_time() - started:.2f} s CPU")
"""


def _reversed_log(records: int, folder: Path) -> Path:
    """The made-up conversation's first ``records`` records, last first."""
    forward = _claude_code_session(records // 2, folder / "forward.jsonl")
    lines = forward.read_text().splitlines(keepends=True)[:records]
    path = folder / f"reversed_{records}.jsonl"
    path.write_text("".join(reversed(lines)))
    forward.unlink()
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, nargs="+", default=[600, 2000])
    parser.add_argument("--read-only", action="store_true", help="only the reader, not the whole replay")
    args = parser.parse_args()
    print(
        "| reversed records | read (reader alone) | replay: conversations, requests | seconds wall / CPU | peak RSS MB |"
    )
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for records in args.records:
            path = _reversed_log(records, Path(tmp))
            read = subprocess.run(
                [sys.executable, "-c", _READ, str(path)], check=True, capture_output=True, text=True
            ).stdout.strip()
            if args.read_only:
                print(f"| {records:,} | {read} | - | - | - |")
            else:
                seconds, peak, out = _run([path])
                print(f"| {records:,} | {read} | {out} | {seconds} | {peak:.0f} |")
            path.unlink()


if __name__ == "__main__":
    main()
