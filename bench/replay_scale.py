"""Replay speed and memory: a 3 MB Claude Code session, 200 tau-bench conversations, 2,000 / 10,000 made-up ones,
one made-up Claude Code conversation of 500 / 1,000 / 2,000 calls, every shared session in one run, and start-up.

Run by hand from the project root (figures go to bench/README.md, section "Replay: speed and memory"):

    python bench/replay_scale.py [--sizes 200 2000 10000] [--calls 500 1000 2000] [--tau PATH] [--session PATH]
        [--only claude-code|tau|startup|shared] [--without-intentions] [--runs K]

The made-up Claude Code conversation (``_claude_code_session``) is one growing thread: a user request, then per call
an assistant line (text + a ``Read`` tool use, logged usage growing by 300 tokens a call) and its tool result, 6 s
apart. Start-up is the time from the process start to the first byte read of the input (``promptcache replay`` in
a child, from its first statement to its first ``open`` of the input; the interpreter's own start is not in it),
median of 5.

With ``--runs K`` each long conversation is replayed K times, the runs of all sizes in a shuffled order (seeded),
and each row shows the median CPU time; below the rows, the exponent ``b`` of the least-squares fit
``CPU = a * calls^b`` over the medians, and the CPU seconds each added call costs between consecutive sizes (a
fixed cost, the imports and the tokenizer, keeps ``b`` under 1 for linear work; quadratic work shows as a cost per
call that grows with the size).

Each replay runs in its own child process (``python -c``; the default strategies, the combined row, no chart), so
its peak resident memory (the child's own ``getrusage(RUSAGE_SELF).ru_maxrss``) and wall time are its own. The larger inputs
are the tau-bench conversations repeated with new ids (``task_id`` ``r<k>-<id>``, so the ResponseCache and the
prompt cache see distinct traffic families but the same texts), one conversation per line, written to a temporary
directory that is deleted afterwards — nothing is written into the project.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from shared_data import find_data_file

_CHILD = """
import os, resource, sys
from promptcache.replay._engine import run_replay
if os.environ.get("REPLAY_SCALE_NO_INTENTIONS"):  # --without-intentions: what the rest of the replay costs
    from promptcache.replay._intentions import IntentionReplay
    IntentionReplay.feed = lambda self, request: None
r = run_replay(sys.argv[1:], "anthropic.claude-sonnet-4-20250514-v1:0")
print(f"{r.conversations:,}, {r.requests:,}")
usage = resource.getrusage(resource.RUSAGE_SELF)
print(f"{usage.ru_utime + usage.ru_stime:.1f}")
print(usage.ru_maxrss)
"""


def _fit(calls: list[int], cpu: list[float]) -> float:
    """The exponent ``b`` of the least-squares fit ``log cpu = log a + b log calls``."""
    xs, ys = [math.log(c) for c in calls], [math.log(t) for t in cpu]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def _long_conversations(calls: list[int], runs: int, tmp: Path, intentions: bool) -> None:
    """The rows of one growing Claude Code conversation per size in ``calls``, each replayed ``runs`` times."""
    paths = {n: _claude_code_session(n, tmp / f"cc_{n}.jsonl") for n in calls}
    order = [n for n in calls for _ in range(runs)]
    random.Random(0).shuffle(order)
    done: dict[int, list[tuple[str, float, str]]] = {n: [] for n in calls}
    for n in order:
        done[n].append(_run([paths[n]], intentions))
    medians = []
    for n in calls:
        rows = sorted(done[n], key=lambda r: float(r[0].split(" / ")[1]))
        seconds, peak, out = rows[len(rows) // 2]
        medians.append(float(seconds.split(" / ")[1]))
        label = "" if intentions else ", without the intention replay"
        many = f" (median of {runs})" if runs > 1 else ""
        print(f"| Claude Code, one conversation of {n:,} calls{label}{many} | "
              f"{paths[n].stat().st_size / 1e6:.1f} | {out} | {seconds} | {peak:.0f} |")  # fmt: skip
    for path in paths.values():
        path.unlink()
    if len(calls) >= 2 and all(medians):
        steps = ", ".join(
            f"{a:,} -> {b:,}: {(tb - ta) / (b - a) * 1000:.2f} ms" for a, b, ta, tb in
            zip(calls, calls[1:], medians, medians[1:])
        )  # fmt: skip
        print(f"\nfitted exponent (CPU = a * calls^b): b = {_fit(calls, medians):.2f}; CPU per added call: {steps}\n")


def _run(paths: list[Path], intentions: bool = True) -> tuple[str, float, str]:
    """(wall / CPU seconds, peak RSS in MB, child's counts) of one replay in a child process (its own
    ``ru_utime + ru_stime`` and ``ru_maxrss``, KB); ``intentions=False``: without the intention replay."""
    started = time.perf_counter()
    env = {**os.environ, **({} if intentions else {"REPLAY_SCALE_NO_INTENTIONS": "1"})}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, *map(str, paths)], check=True, capture_output=True, text=True, env=env
    ).stdout
    seconds = time.perf_counter() - started
    counts, cpu, peak_kb = out.strip().splitlines()[-3:]
    return f"{seconds:.1f} / {cpu}", int(peak_kb) / 1024, counts


def _claude_code_session(n: int, path: Path) -> Path:
    """One Claude Code conversation of ``n`` calls (module docstring)."""
    t0 = 1_767_000_000.0
    lines: list[dict[str, object]] = []

    def stamp(t: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"

    lines.append({"type": "user", "uuid": "u0", "parentUuid": None, "sessionId": "bench", "timestamp": stamp(t0),
                  "message": {"role": "user", "content": "Please fix the failing tests in the repository."}})  # fmt: skip
    parent, total, t = "u0", 20_000, t0
    words = ("alpha", "beta", "gamma", "delta", "read", "file", "test", "edit")
    for k in range(n):
        t += 5
        text = " ".join(words[(k * 7 + i) % len(words)] for i in range(40))
        usage = {"input_tokens": 5, "cache_read_input_tokens": total, "cache_creation_input_tokens": 300,
                 "output_tokens": 50, "cache_creation": {"ephemeral_5m_input_tokens": 300,
                                                         "ephemeral_1h_input_tokens": 0}}  # fmt: skip
        total += 300
        use = {"type": "tool_use", "id": f"toolu_{k}", "name": "Read", "input": {"file_path": f"/src/f{k}.py"}}
        lines.append({"type": "assistant", "uuid": f"a{k}", "parentUuid": parent, "sessionId": "bench",
                      "requestId": f"req_{k}", "timestamp": stamp(t),
                      "message": {"id": f"msg_{k}", "role": "assistant", "model": "claude-opus-4-6", "usage": usage,
                                  "content": [{"type": "text", "text": text}, use]}})  # fmt: skip
        t += 1
        result = {"type": "tool_result", "tool_use_id": f"toolu_{k}", "content": text * 2}
        lines.append({"type": "user", "uuid": f"r{k}", "parentUuid": f"a{k}", "sessionId": "bench",
                      "timestamp": stamp(t), "message": {"role": "user", "content": [result]}})  # fmt: skip
        parent = f"r{k}"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


_STARTUP = """
import time
started = time.perf_counter()
import builtins, io, os, sys
target = sys.argv[1]
real_open = io.open

def watched(file, *args, **kwargs):
    if str(file) == target:
        print(f"STARTUP {time.perf_counter() - started:.3f}", file=sys.__stderr__, flush=True)
        os._exit(0)
    return real_open(file, *args, **kwargs)

builtins.open = io.open = watched
from promptcache._cli import main
main(["replay", target, "--out", sys.argv[2], "--no-chart"])
"""


def _startup(path: Path, out: Path) -> float:
    """Seconds from interpreter start-up done to the first ``open`` of ``path`` (median of 5 child processes); the
    interpreter's own start (``python -c pass``) is measured apart and not included."""
    runs = []
    for _ in range(5):
        err = subprocess.run(
            [sys.executable, "-c", _STARTUP, str(path), str(out)], capture_output=True, text=True, check=False
        ).stderr
        runs.append(float(next(line.split()[1] for line in err.splitlines() if line.startswith("STARTUP"))))
    return sorted(runs)[len(runs) // 2]


def _shared_sessions() -> list[Path]:
    """Every shared Claude Code session folder and log (a log with its folder counts once, through the folder)."""
    out: list[Path] = []
    for name in ("claude_code", "claude_code_ext/m-claude", "claude_code_ext/session-share"):
        folder = find_data_file(name, required=False)
        if folder is not None:
            out.append(folder)  # a project folder: every session in it, each once
    return out


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
    parser.add_argument("--calls", type=int, nargs="+", default=[500, 1000, 2000])
    parser.add_argument("--tau", help="tau_bench_gpt-4o-airline.json (default: found by bench/shared_data.py)")
    parser.add_argument("--session", help="a Claude Code session log (default: the shared 258c7280 one, 2.8 MB)")
    parser.add_argument("--only", choices=("claude-code", "tau", "startup", "shared"), action="append")
    parser.add_argument(
        "--without-intentions", action="store_true", help="also run each long conversation without the intention replay"
    )
    parser.add_argument("--runs", type=int, default=1, help="replays per long conversation (median; shuffled)")
    args = parser.parse_args()
    only = set(args.only or ("claude-code", "tau", "startup", "shared"))
    print("| input | size MB | conversations, requests | seconds wall / CPU | peak RSS MB |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        if "claude-code" in only:
            _long_conversations(sorted(args.calls), args.runs, Path(tmp), True)
            if args.without_intentions:
                _long_conversations(sorted(args.calls), args.runs, Path(tmp), False)
        if "shared" in only:
            folders = _shared_sessions()
            if folders:
                seconds, peak, out = _run(folders)
                size = sum(f.stat().st_size for d in folders for f in d.rglob("*.jsonl")) / 1e6
                print(f"| every shared Claude Code session, one run | {size:.1f} | {out} | {seconds} | {peak:.0f} |")
        if "tau" in only:
            tau = find_data_file("tau_bench_gpt-4o-airline.json", args.tau)
            session = find_data_file("claude_code/258c7280-ae70-4798-800f-63464d01a85d.jsonl", args.session)
            seconds, peak, out = _run([session])
            print(f"| Claude Code session {session.name[:8]} | {session.stat().st_size / 1e6:.1f} | {out} | "
                  f"{seconds} | {peak:.0f} |")  # fmt: skip
            seconds, peak, out = _run([tau])
            print(f"| tau-bench airline (JSON) | {tau.stat().st_size / 1e6:.1f} | {out} | {seconds} | {peak:.0f} |")
            for n in sorted(args.sizes):
                path = _synthetic(tau, n, Path(tmp))
                seconds, peak, out = _run([path])
                print(f"| tau-bench x{n} (JSONL) | {path.stat().st_size / 1e6:.1f} | {out} | {seconds} | {peak:.0f} |")
                path.unlink()
        if "startup" in only:
            path = _claude_code_session(10, Path(tmp) / "startup.jsonl")
            print(f"\nstart-up before the first file is read (median of 5): {_startup(path, Path(tmp) / 'out'):.2f} s")


if __name__ == "__main__":
    main()
