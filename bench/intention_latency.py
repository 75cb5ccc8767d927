"""Lookup latency of ``IntentionMemory(embeddings=...)`` at 1,000 and 10,000 memories per user, in memory and on Redis.

One user holds N memories (``"show the status of order {i} for customer {7 i}"``, tool ``lookup``). 300 lookups a
pass (``--passes``, default 3) after one warm-up lookup: 100 stored texts (exact hits), 100 rewordings ("what is the status of order
...", proposed by the embeddings, then vetoed or accepted) and 100 unrelated questions (misses). Timed:
``IntentionMemory.retrieve`` end to end. The embedding model's own time is left out by default: ``--model fake`` is
a deterministic bag-of-words model (each word a fixed random 384-dimensional vector, a text the normalised sum),
its query vectors computed before the timing, so the figures are the library's cost (index, proposals, vetoes,
backend round trip). ``--model local`` uses ``local_embeddings()`` (all-MiniLM-L6-v2 in NumPy) and times the
query's embedding too. Also timed: the first lookup after another worker stored one memory (the version changed,
so the index is brought up to date).

Beside each row's wall-clock p50/p99: a ``PING`` timed right after every lookup on its own connection (the same
run, so the same load: what the machine's scheduling alone does to one round trip), the client's CPU time per
lookup (``time.thread_time``: our cost, whatever the wait for a core; kernel time of the round trip included), and
the load average (1, 5 and 15 minutes) when the row was printed.

Run: ``python bench/intention_latency.py [--sizes 1000,10000] [--backends memory,redis] [--passes N]
[--model fake|local] [--redis-url URL]``. Each row is the median of the passes' p50 and the best / median of
their p99 (the stored set is the same for all passes).
``--ab``: on Redis, the same lookups with and without the held choice (one round trip: the result the choice on
the held index would serve is read with the version; two: the version, then the result), passes alternating.
``--pause-ms MS``: sleep before each lookup, as an agent waits on its model between lookups (default 0: a
tight loop, which the scheduler treats as a CPU-bound job).
``--instructions``: run under ``valgrind --tool=callgrind --instr-atstart=no``: only the timed lookups are
instrumented (a client request compiled with ``cc`` at start), so callgrind's total ``Ir`` divided by the number
of lookups printed is the client's instructions per lookup (the Redis server is another process, not counted).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import time
import uuid
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.intention import InMemoryIntentionBackend, IntentionMemory


class BagOfWords(Embeddings):
    """Deterministic and fast: a text's vector is the normalised sum of its words' fixed random vectors."""

    def __init__(self, dims: int = 384) -> None:
        self.dims = dims
        self.words: dict[str, Any] = {}
        self.queries: dict[str, list[float]] = {}

    def _word(self, word: str) -> Any:
        vec = self.words.get(word)
        if vec is None:
            seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
            vec = self.words[word] = np.random.default_rng(seed).standard_normal(self.dims).astype(np.float32)
        return vec

    def _vec(self, text: str) -> list[float]:
        total = np.sum([self._word(w) for w in text.casefold().split()], axis=0)
        return (total / (np.linalg.norm(total) or 1.0)).tolist()  # type: ignore[no-any-return]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        hit = self.queries.get(text)
        return hit if hit is not None else self._vec(text)

    def warm(self, texts: list[str]) -> None:
        """Compute the query vectors of ``texts`` now (outside the timing)."""
        self.queries.update((t, self._vec(t)) for t in texts)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def texts(n: int) -> list[str]:
    return [f"show the status of order {i} for customer {i * 7}" for i in range(n)]


def queries(n: int) -> list[str]:
    step = max(1, n // 100)
    exact = [f"show the status of order {i} for customer {i * 7}" for i in range(0, n, step)][:100]
    reworded = [f"what is the status of order {i} for customer {i * 7}" for i in range(1, n, step)][:100]
    other = [f"how is the weather in city number {i} today" for i in range(100)]
    out = [q for trio in zip(exact, reworded, other) for q in trio]
    return out


class Timings:
    """Per lookup: wall ms, client CPU ms (this thread) and the wall ms of the ``PING`` timed right after it."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.ping: list[float] = []


def run(
    memory: IntentionMemory, lookups: list[str], ping: Any = None, probe: Any = None, pause_s: float = 0.0
) -> tuple[Timings, int]:
    """``lookups`` timed one by one after one warm-up lookup; ``ping``: a redis-py client pinged after each lookup
    (interleaved, so the PING sees the same load); ``probe``: callgrind's start/stop around the lookups only;
    ``pause_s``: a sleep before each lookup (an agent waits on its model between two lookups; a loop that never
    sleeps is treated by the scheduler as a CPU-bound job)."""
    memory.retrieve("bench-user", lookups[0])  # warm-up: the index is built, the connection made
    if ping is not None:
        ping.ping()
    out, hits = Timings(), 0
    wall, cpu = time.perf_counter, time.thread_time
    if probe is not None:
        probe.start()
    for q in lookups:
        if pause_s:
            time.sleep(pause_s)
        c0, t0 = cpu(), wall()
        match = memory.retrieve("bench-user", q, tool="lookup")
        t1, c1 = wall(), cpu()
        if ping is not None:
            ping.ping()
            out.ping.append((wall() - t1) * 1000)
        out.wall.append((t1 - t0) * 1000)
        out.cpu.append((c1 - c0) * 1000)
        hits += match is not None
    if probe is not None:
        probe.stop()
    return out, hits


def after_write(memory: IntentionMemory, other: IntentionMemory, lookups: list[str], n: int) -> list[float]:
    """The first lookup after another worker's store, 20 times."""
    out = []
    for k in range(20):
        other.store("bench-user", f"show the status of order {n + k} for customer 0", {"n": k}, tool="lookup")
        t0 = time.perf_counter()
        memory.retrieve("bench-user", lookups[k], tool="lookup")
        out.append((time.perf_counter() - t0) * 1000)
    return out


def held_choice_ab(redis_url: str, size: int, passes: int = 3) -> None:
    """Redis, ``size`` memories: lookups with the held choice (the chosen result read with the version, one round
    trip) and without it (``indexes.peek`` answering ``None``: the version read, then a ``GET`` of the result),
    passes alternating on one stored set, so both see the same load."""
    lookups = queries(size)
    emb = BagOfWords()
    emb.warm(lookups)
    prefix = f"pcbench:{uuid.uuid4().hex[:8]}:"
    backend = RedisIntentionBackend(url=redis_url, prefix=prefix, max_memories_per_user=size + 50)
    memory = IntentionMemory(backend, embeddings=emb, ttl_s=3600)
    held = memory.indexes.peek
    try:
        for i, text in enumerate(texts(size)):
            memory.store("bench-user", text, {"n": i}, tool="lookup")
        got: dict[str, list[list[float]]] = {"one round trip": [], "two round trips": []}
        for _ in range(passes):
            for mode in got:
                memory.indexes.peek = held if mode == "one round trip" else (lambda user: None)  # type: ignore[method-assign]
                got[mode].append(run(memory, lookups)[0].wall)
        for mode, runs in got.items():
            p50 = statistics.median(statistics.median(t) for t in runs)
            p99s = sorted(pct(t, 0.99) for t in runs)
            print(f"| Redis, {mode} | {size:,} | {p50:.3f} | {p99s[0]:.3f} / {p99s[len(p99s) // 2]:.3f} |", flush=True)
    finally:
        memory.indexes.peek = held  # type: ignore[method-assign]
        memory.forget("bench-user")
        backend.close()


_PROBE_C = """
#include <valgrind/callgrind.h>
void start(void) { CALLGRIND_START_INSTRUMENTATION; }
void stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
"""


def callgrind_probe() -> Any:
    """``start``/``stop`` of callgrind's instrumentation (no-ops outside valgrind), compiled with ``cc`` from
    valgrind's ``callgrind.h``."""
    import ctypes
    import subprocess
    import tempfile

    folder = tempfile.mkdtemp(prefix="pcbench-probe-")
    src, lib = os.path.join(folder, "probe.c"), os.path.join(folder, "probe.so")
    with open(src, "w") as f:
        f.write(_PROBE_C)
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", lib, src], check=True)
    return ctypes.CDLL(lib)


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def row(name: str, size: int, passes: list[tuple[Timings, int]], later: list[float]) -> str:
    """One table row: wall p50 (median of passes) and p99 (best / median), the interleaved PING's, client CPU."""

    def p50(get: Any) -> float:
        return statistics.median(statistics.median(get(t)) for t, _ in passes)

    def p99s(get: Any) -> str:
        values = sorted(pct(get(t), 0.99) for t, _ in passes)
        return f"{values[0]:.3f}" if len(values) == 1 else f"{values[0]:.3f} / {values[len(values) // 2]:.3f}"

    ping = f"{p50(lambda t: t.ping):.3f} / {p99s(lambda t: t.ping)}" if passes[0][0].ping else "-"
    cpu_mean = statistics.median(statistics.fmean(t.cpu) for t, _ in passes)
    return (
        f"| {name} | {size:,} | {passes[0][1]} | {p50(lambda t: t.wall):.3f} | {p99s(lambda t: t.wall)} | {ping} | "
        f"{p50(lambda t: t.cpu):.3f} / {cpu_mean:.3f} | {statistics.median(later):.2f} / {max(later):.2f} | {load()} |"
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--backends", default="memory,redis", help="comma-separated: memory, redis")
    ap.add_argument("--passes", type=int, default=3, help="timed passes over the lookups per row")
    ap.add_argument("--model", choices=["fake", "local"], default="fake")
    ap.add_argument("--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    ap.add_argument("--ab", action="store_true", help="compare one and two round trips on Redis (held choice)")
    ap.add_argument("--pause-ms", type=float, default=0.0, help="sleep before each lookup (ms; default 0)")
    ap.add_argument("--instructions", action="store_true", help="instrument only the lookups (under callgrind)")
    args = ap.parse_args(argv)
    if args.ab:
        print(f"1-minute load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print("| lookup | memories | p50 ms (median of passes) | p99 ms best / median of 3 passes |")
        print("|---|---|---|---|")
        for size in [int(x) for x in args.sizes.split(",")]:
            held_choice_ab(args.redis_url, size)
        print(f"(1-minute load average at the end {os.getloadavg()[0]:.1f})")
        return
    import redis

    probe = callgrind_probe() if args.instructions else None
    print(
        f"model: {args.model}; pause before each lookup {args.pause_ms:g} ms; load average (1/5/15 min) at start {load()} on {os.cpu_count()} CPUs"
    )
    print(
        "| backend | memories | hits | p50 ms | p99 ms | PING p50 / p99 ms | client CPU p50 / mean ms | "
        "first lookup after another worker's store, p50 / max ms | load 1/5/15 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    backends = [b.strip() for b in args.backends.split(",")]
    ping = redis.Redis.from_url(args.redis_url)
    for size in [int(x) for x in args.sizes.split(",")]:
        lookups = queries(size)
        for name in ("in-memory", "Redis"):
            if {"in-memory": "memory", "Redis": "redis"}[name] not in backends:
                continue
            if args.model == "local":
                from promptcache.intention import local_embeddings

                emb: Any = local_embeddings()
            else:
                emb = BagOfWords()
                emb.warm(lookups)
            prefix = f"pcbench:{uuid.uuid4().hex[:8]}:"
            if name == "Redis":
                backend: Any = RedisIntentionBackend(url=args.redis_url, prefix=prefix, max_memories_per_user=size + 50)
                other_backend: Any = RedisIntentionBackend(url=args.redis_url, prefix=prefix)
            else:
                backend = other_backend = InMemoryIntentionBackend(max_memories_per_user=size + 50)
            memory = IntentionMemory(backend, embeddings=emb, ttl_s=3600)
            other = IntentionMemory(other_backend, embeddings=emb, ttl_s=3600)
            try:
                for i, text in enumerate(texts(size)):
                    memory.store("bench-user", text, {"n": i}, tool="lookup")
                passes = [run(memory, lookups, ping, probe, args.pause_ms / 1000) for _ in range(args.passes)]
                if probe is not None:
                    print(f"instrumented: {len(lookups) * args.passes} lookups ({name}, {size:,} memories)")
                later = after_write(memory, other, lookups, size)
                print(row(name, size, passes, later), flush=True)
            finally:
                memory.forget("bench-user")
                for b in {id(backend): backend, id(other_backend): other_backend}.values():
                    if hasattr(b, "close"):
                        b.close()
    ping.close()
    print(f"(load average at the end {load()})")


if __name__ == "__main__":
    main()
