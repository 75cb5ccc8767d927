"""Replay speed and memory: a 3 MB Claude Code session, 200 tau-bench conversations, and 2,000 / 10,000 made-up ones.

Run by hand from the project root (figures go to bench/README.md, section "Replay: speed and memory"):

    python bench/replay_scale.py [--sizes 200 2000 10000] [--tau PATH] [--session PATH]

Each replay runs in its own child process (``python -c``; the default strategies, the combined row, no chart), so
its peak resident memory (the child's own ``getrusage(RUSAGE_SELF).ru_maxrss``) and wall time are its own. The larger inputs
are the tau-bench conversations repeated with new ids (``task_id`` ``r<k>-<id>``, so the ResponseCache and the
prompt cache see distinct traffic families but the same texts), one conversation per line, written to a temporary
directory that is deleted afterwards — nothing is written into the project.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from shared_data import find_data_file

_CHILD = """
import resource, sys
from promptcache.replay._engine import run_replay
r = run_replay(sys.argv[1:], "anthropic.claude-sonnet-4-20250514-v1:0")
print(f"{r.conversations:,}, {r.requests:,}")
usage = resource.getrusage(resource.RUSAGE_SELF)
print(f"{usage.ru_utime + usage.ru_stime:.1f}")
print(usage.ru_maxrss)
"""


def _run(paths: list[Path]) -> tuple[str, float, str]:
    """(wall / CPU seconds, peak RSS in MB, child's counts) of one replay in a child process (its own
    ``ru_utime + ru_stime`` and ``ru_maxrss``, KB)."""
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, *map(str, paths)], check=True, capture_output=True, text=True
    ).stdout
    seconds = time.perf_counter() - started
    counts, cpu, peak_kb = out.strip().splitlines()[-3:]
    return f"{seconds:.1f} / {cpu}", int(peak_kb) / 1024, counts


def _synthetic(tau: Path, n: int, folder: Path) -> Path:
    conversations = json.loads(tau.read_bytes())
    path = folder / f"tau_x{n}.jsonl"
    with path.open("w") as out:
        for k in range(n):
            conv = dict(conversations[k % len(conversations)])
            conv["task_id"] = f"r{k // len(conversations)}-{conv.get('task_id')}"
            out.write(json.dumps(conv) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 2000, 10000])
    parser.add_argument("--tau", help="tau_bench_gpt-4o-airline.json (default: found by bench/shared_data.py)")
    parser.add_argument("--session", help="a Claude Code session log (default: the shared 258c7280 one, 2.8 MB)")
    args = parser.parse_args()
    tau = find_data_file("tau_bench_gpt-4o-airline.json", args.tau)
    session = find_data_file("claude_code/258c7280-ae70-4798-800f-63464d01a85d.jsonl", args.session)
    print("| input | size MB | conversations, requests | seconds wall / CPU | peak RSS MB |")
    print("|---|---|---|---|---|")
    seconds, peak, out = _run([session])
    print(f"| Claude Code session {session.name[:8]} | {session.stat().st_size / 1e6:.1f} | {out} | {seconds} | "
          f"{peak:.0f} |")  # fmt: skip
    seconds, peak, out = _run([tau])
    print(f"| tau-bench airline (JSON) | {tau.stat().st_size / 1e6:.1f} | {out} | {seconds} | {peak:.0f} |")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sorted(args.sizes):
            path = _synthetic(tau, n, Path(tmp))
            seconds, peak, out = _run([path])
            print(f"| tau-bench x{n} (JSONL) | {path.stat().st_size / 1e6:.1f} | {out} | {seconds} | {peak:.0f} |")
            path.unlink()


if __name__ == "__main__":
    main()
