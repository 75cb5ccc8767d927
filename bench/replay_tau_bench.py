"""Replay benchmark: tau-bench airline (200 conversations, 2,454 requests) through every placement strategy.

Run by hand from the project root (figures go to bench/README.md, section "Replay"):

    python bench/replay_tau_bench.py [--data tau_bench_gpt-4o-airline.json]

For each model and request spacing it prints the input-side cost of each strategy relative to ``none``, plus a
*foresight bound*: langchain-aws' placement minus the tail write of each conversation's final request (that write
is never read). No real strategy can know which request is the last, so the bound is what any placement could
still gain over langchain-aws on this traffic (Claude only: on Nova a write costs the same as input, so skipping
one gains nothing and the bound is not computed).
"""

from __future__ import annotations

import argparse
import time

from shared_data import find_data_file

from promptcache.replay._engine import run_replay
from promptcache.replay._prepare import Request
from promptcache.replay._registry import STRATEGIES
from promptcache.replay._simulator import Checkpoint
from promptcache.replay._strategies import LangChainAwsStrategy

_NAME = "tau_bench_gpt-4o-airline.json"


class ForesightBound(LangChainAwsStrategy):
    """langchain-aws' points, without the tail point on a conversation's final request (uses the future)."""

    name = "foresight-bound"
    description = "reference only: knows which request is the last"

    def place(self, request: Request) -> list[Checkpoint]:
        points = super().place(request)
        if request.is_last:
            points = [p for p in points if p.boundary != request.groups[-1].end]
        return points


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", help=f"{_NAME} (default: found by bench/shared_data.py)")
    args = parser.parse_args()
    STRATEGIES[ForesightBound.name] = ForesightBound
    names = ["none", "last-message", "langchain-aws", "multi-point", "anchored-tail", "foresight-bound"]
    models = [
        "anthropic.claude-sonnet-4-20250514-v1:0",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "amazon.nova-pro-v1:0",
    ]
    print("| model | gap s | " + " | ".join(names) + " | +ResponseCache | RC hits | intention answered | run s |")
    print("|---" * (len(names) + 6) + "|")
    for model in models:
        for gap in (10.0, 120.0, 600.0):
            started = time.perf_counter()
            result = run_replay([find_data_file(_NAME, args.data)], model, names, gap_s=gap)
            elapsed = time.perf_counter() - started
            rel = [result.relative(n) for n in names]
            if result.price.write_5m <= result.price.input:  # Nova: a write costs no more than input, no bound
                rel[names.index("foresight-bound")] = None
            combined = result.relative("anchored-tail+response-cache")
            cells = " | ".join("n/a" if r is None else f"{r:.4f}" for r in rel)
            print(
                f"| {model} | {gap:g} | {cells} | {combined:.4f} | {result.response_cache.hits} | "
                f"{result.intention.answered}/{result.intention.tool_calls} | {elapsed:.1f} |"
            )


if __name__ == "__main__":
    main()
