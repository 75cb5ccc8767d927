"""Benchmark: cache-point placement time and token-counting time, 10 to 1,000 messages.

Placement is timed with injected token counts (a dict lookup), on the growing-conversation path: the previous
placements come from the same conversation two messages shorter, as the wrapper would have stored them. Token
counting (tiktoken cl100k_base, offline) is reported separately: cold (memo cleared, every message encoded) and
warm (the per-text memo hit, as on a conversation's later turns).

    python bench/cache_points.py            # table for 10..1000 messages
    python bench/cache_points.py --repeat 50
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from promptcache.cache_points import CacheStrategyConfig, MultiPointStrategy, default_count_tokens, get_model_info
from promptcache.cache_points._tokens import count_text_tokens

WORDS = (
    "model cache token prompt bedrock request message system layer network gradient training data "
    "vector search answer question example context window latency cost"
).split()


def conversation(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        user = (n - 1 - i) % 2 == 0  # alternate roles, ending on a user message (the new question)
        length = rng.randint(10, 120) if user else rng.randint(40, 400)
        text = f"m{i} " + " ".join(rng.choice(WORDS) for _ in range(length))
        out.append({"role": "user" if user else "assistant", "content": text})
    return out


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def bench(n: int, repeat: int) -> dict[str, float]:
    info = get_model_info("anthropic.claude-sonnet-4-20250514-v1:0")
    messages = conversation(n)
    counts = {id(m): default_count_tokens(m) for m in messages}
    inject = lambda m: counts.get(id(m), 1_200)  # noqa: E731 - the system prompt counts 1,200
    system = "You are a helpful assistant. " * 300
    previous = (
        MultiPointStrategy(CacheStrategyConfig(info, system, messages[:-2] or messages, count_tokens=inject))
        .determine_optimal_cache_points()
        .placements
    )
    placement = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        MultiPointStrategy(
            CacheStrategyConfig(info, system, messages, previous_placements=previous, count_tokens=inject)
        ).determine_optimal_cache_points()
        placement.append((time.perf_counter_ns() - start) / 1e6)
    cold, warm = [], []
    for _ in range(max(3, repeat // 10)):
        count_text_tokens.cache_clear()
        start = time.perf_counter_ns()
        for m in messages:
            default_count_tokens(m)
        cold.append((time.perf_counter_ns() - start) / 1e6)
        start = time.perf_counter_ns()
        for m in messages:
            default_count_tokens(m)
        warm.append((time.perf_counter_ns() - start) / 1e6)
    return {
        "n": n,
        "tokens": sum(counts.values()),
        "p50": statistics.median(placement),
        "p95": percentile(placement, 0.95),
        "cold": statistics.median(cold),
        "warm": statistics.median(warm),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=200, help="placement runs per size (default 200)")
    parser.add_argument("--sizes", default="10,50,100,200,500,1000")
    args = parser.parse_args()
    default_count_tokens({"role": "user", "content": "warm up the encoding"})
    print("| messages | tokens | placement p50 (ms) | placement p95 (ms) | counting cold (ms) | counting warm (ms) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in (int(s) for s in args.sizes.split(",")):
        r = bench(n, args.repeat)
        print(f"| {r['n']} | {r['tokens']:,} | {r['p50']:.3f} | {r['p95']:.3f} | {r['cold']:.2f} | {r['warm']:.3f} |")


if __name__ == "__main__":
    main()
