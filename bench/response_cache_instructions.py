"""Instructions per create_agent turn (valgrind callgrind): deterministic where wall-clock ratios are noisy.

    python bench/response_cache_instructions.py [--turns 100]

Runs this script under ``valgrind --tool=callgrind`` twice per variant (``--inner``: 30 warm-up turns, then 0 or
``--turns`` turns), and reports (total of the long run - total of the short run) / turns, per variant: no cache, a
pass-through middleware, and a ResponseCache miss (in-memory). Same prompt and tools as bench/response_cache.py.
Needs ``valgrind`` on PATH (Debian package); takes ~1 minute per variant.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

VARIANTS = ("no cache", "pass-through middleware", "ResponseCache miss")


def inner(variant: str, turns: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from langchain.agents import create_agent
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.messages import HumanMessage
    from response_cache import conversation, tools

    from promptcache import InMemoryServerCache, ResponseCache
    from promptcache.testing import ScriptedChatModel

    class PassThrough(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(request)

    middleware = {
        "no cache": [],
        "pass-through middleware": [PassThrough()],
        "ResponseCache miss": [ResponseCache(InMemoryServerCache())],
    }[variant]
    history = conversation()[1:-1]
    agent = create_agent(
        ScriptedChatModel(replies=["ok"], cycle=True, usage=False), tools=tools(), middleware=middleware
    )
    for i in range(30 + turns):  # every turn a new question: a miss
        agent.invoke({"messages": [*history, HumanMessage(f"question {i}")]})


def count(variant: str, turns: int) -> int:
    out = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--inner",
            variant,
            "--turns",
            str(turns),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(re.search(r"Collected : (\d+)", out.stderr).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--inner", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        inner(args.inner, args.turns)
        return
    per_turn = {v: (count(v, args.turns) - count(v, 0)) / args.turns for v in VARIANTS}
    base = per_turn["no cache"]
    print("| variant | instructions per turn | vs no cache |")
    print("|---|---:|---:|")
    for variant, value in per_turn.items():
        print(f"| {variant} | {value / 1e6:.3f} M | {value / base - 1:+.1%} |")


if __name__ == "__main__":
    main()
