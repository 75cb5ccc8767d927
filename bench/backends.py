"""ServerCache backends against their raw baselines, in one run: latency (p50, p99) and throughput of get/set.

    python bench/backends.py [--n 20000] [--redis redis://127.0.0.1:6379/0]

Rows: InMemoryServerCache vs a raw dict lookup plus a copy of the value (``memoryview(v).tobytes()``), and
RedisCache vs raw redis-py GET/SET on the same server, at 1 KB and 64 KB values. Ratios are ours / raw (p50).
Then the in-memory get alone, without the per-call clock reads (which cost about as much as the get): ``timeit``
loops of 20,000 calls, ``--rounds`` rounds with the variants interleaved, fastest loop per variant.
Targets: in-memory get close to a dict get + copy; RedisCache within 1.3x of a raw redis-py GET.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import timeit
import uuid
from collections.abc import Callable

import redis

from promptcache.backends import InMemoryServerCache
from promptcache.integrations.redis import RedisCache


def measure(fn: Callable[[int], object], n: int) -> dict[str, float]:
    """Per-call latency in microseconds (p50, p99) and calls per second, after a warm-up."""
    for i in range(min(1000, n)):
        fn(i)
    samples = []
    clock = time.perf_counter_ns
    start = clock()
    for i in range(n):
        t0 = clock()
        fn(i)
        samples.append(clock() - t0)
    total_s = (clock() - start) / 1e9
    samples.sort()
    return {
        "p50": samples[len(samples) // 2] / 1000,
        "p99": samples[int(len(samples) * 0.99)] / 1000,
        "ops": n / total_s,
        "mean": statistics.fmean(samples) / 1000,
    }


def row(name: str, m: dict[str, float], base: dict[str, float] | None) -> str:
    ratio = f"{m['p50'] / base['p50']:5.2f}x" if base else "  1.00x"
    return f"| {name:34} | {m['p50']:8.2f} | {m['p99']:8.2f} | {m['ops']:>10,.0f} | {ratio} |"


def fastest_gets(rounds: int) -> None:
    """In-memory get vs a dict get + copy, 1 KB: fastest of ``rounds`` interleaved ``timeit`` loops, ns per call."""
    keys = [f"k{i}" for i in range(256)]
    value = os.urandom(1024)
    d = {k: value for k in keys}
    mem = InMemoryServerCache(max_entries=1000)
    for k in keys:
        mem.set(k, value, 300.0)
    variants = {
        "dict get + copy": lambda: memoryview(d["k17"]).tobytes(),
        "InMemoryServerCache.get": lambda: mem.get("k17"),
        "InMemoryServerCache.get, missing key": lambda: mem.get("absent"),
    }
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(rounds):
        for name, fn in variants.items():
            best[name] = min(best[name], timeit.timeit(fn, number=20000) / 20000)
    base = best["dict get + copy"]
    print(f"\nfastest of {rounds} interleaved timeit loops (20,000 calls each), 1 KB, load {os.getloadavg()[0]:.2f}")
    print("| op | ns per call | vs dict get + copy |")
    print("|---|---:|---:|")
    for name, value_s in best.items():
        print(f"| {name} | {value_s * 1e9:.0f} | {value_s / base:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=15, help="rounds of the timeit comparison")
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    args = parser.parse_args()
    n, keys = args.n, [f"k{i}" for i in range(256)]
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| backend / op | p50 us | p99 us | ops/s | p50 ratio vs raw |")
    print("|---|---:|---:|---:|---:|")
    prefix = f"pcbench:{uuid.uuid4().hex[:8]}:"
    raw = redis.Redis.from_url(args.redis, socket_timeout=1, socket_connect_timeout=1)
    ours = RedisCache(url=args.redis, prefix=prefix, socket_timeout_s=1.0)
    try:
        for size in (1024, 65536):
            value = os.urandom(size)
            label = f"{size // 1024} KB"
            # -- in-process -----------------------------------------------------------------------------------
            d = {k: value for k in keys}
            mem = InMemoryServerCache(max_entries=1000)
            for k in keys:
                mem.set(k, value, 300)
            base_get = measure(lambda i: memoryview(d[keys[i & 255]]).tobytes(), n)
            print(row(f"dict get + copy, {label}", base_get, None))
            print(row(f"InMemoryServerCache.get, {label}", measure(lambda i: mem.get(keys[i & 255]), n), base_get))
            base_set = measure(lambda i: d.__setitem__(keys[i & 255], memoryview(value).tobytes()), n)
            print(row(f"dict set + copy, {label}", base_set, None))
            print(
                row(
                    f"InMemoryServerCache.set, {label}",
                    measure(lambda i: mem.set(keys[i & 255], value, 300), n),
                    base_set,
                )
            )
            # -- redis ----------------------------------------------------------------------------------------
            for k in keys:
                raw.set(ours.full_key(k), value, px=300_000)
            rn = max(2000, n // 4)
            raw_get = measure(lambda i: raw.get(ours.full_key(keys[i & 255])), rn)
            print(row(f"redis-py GET, {label}", raw_get, None))
            print(row(f"RedisCache.get, {label}", measure(lambda i: ours.get(keys[i & 255]), rn), raw_get))
            raw_set = measure(lambda i: raw.set(ours.full_key(keys[i & 255]), value, px=300_000), rn)
            print(row(f"redis-py SET PX, {label}", raw_set, None))
            print(row(f"RedisCache.set, {label}", measure(lambda i: ours.set(keys[i & 255], value, 300), rn), raw_set))
    finally:
        ours.clear()
        ours.close()
        raw.close()
    fastest_gets(args.rounds)


if __name__ == "__main__":
    main()
