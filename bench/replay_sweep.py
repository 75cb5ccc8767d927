"""The strategy sweep: ours vs langchain-aws vs the log's own layout vs the hindsight reference, on every setting.

Run by hand from the project root (the table goes to bench/README.md, section "Replay sweep"):

    python bench/replay_sweep.py [--tau DATA/tau_bench_gpt-4o-airline.json] [--sessions DIR]

Settings: tau-bench airline (200 conversations, untimed) at 10 s, 120 s and 600 s between requests, on Claude
Sonnet 4.5 offered only the 5-minute TTL (``--models`` override ``ttls = ["5m"]``), on Claude Sonnet 4.5 with the
1-hour TTL, and on Nova Pro; then each shared Claude Code session (its folder, with sub-agents) at its recorded
times and its own models, where ``as-logged`` is the session's own layout and the logged bill is known.

Columns: the input-side cost relative to ``none`` of ``anchored-tail`` (ours, the default), ``langchain-aws`` (its
middleware's default 5-minute TTL; with the 1-hour TTL offered, also ``langchain-aws ttl=1h``), ``as-logged`` and
``hindsight`` (knows each conversation's next request time), then ours against langchain-aws (the cheaper of its
TTLs) and against as-logged: negative means ours is cheaper.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from shared_data import find_data_file

from promptcache.replay._engine import run_replay
from promptcache.replay._model_table import ModelTable
from promptcache.replay._registry import STRATEGIES
from promptcache.replay._strategies import LangChainAwsStrategy

_TAU = "tau_bench_gpt-4o-airline.json"
_SESSIONS = ("258c7280-ae70-4798-800f-63464d01a85d", "ae4a77f8-aedd-4bc1-888f-c94edc91af04")
SONNET = "anthropic.claude-sonnet-4-5-20250929-v1:0"
NOVA = "amazon.nova-pro-v1:0"


class LangChainAws1h(LangChainAwsStrategy):
    """langchain-aws' placement with its middleware's ``ttl="1h"``."""

    name = "langchain-aws-1h"
    description = "langchain-aws, ttl=1h"

    def __init__(self, rules, price=None, ttl_s: float = 300.0) -> None:  # type: ignore[no-untyped-def]
        super().__init__(rules, price, max(rules.ttls_s))


def _row(label: str, gap: str, result, lc_names: list[str], seconds: float) -> str:  # type: ignore[no-untyped-def]
    rel = {n: result.relative(n) for n in result.strategies}
    ours = result.strategies["anchored-tail"].cost_usd
    lc = min(result.strategies[n].cost_usd for n in lc_names)
    as_logged = result.strategies.get("as-logged")

    def cell(name: str) -> str:
        value = rel.get(name)
        return "n/a" if value is None else f"{value:.2%}"

    vs_lc = f"{ours / lc - 1:+.2%}" if lc else "n/a"
    vs_logged = f"{ours / as_logged.cost_usd - 1:+.2%}" if as_logged and as_logged.cost_usd else "n/a"
    return (
        f"| {label} | {gap} | {cell('anchored-tail')} | {cell('langchain-aws')} | {cell('langchain-aws-1h')} | "
        f"{cell('as-logged')} | {cell('hindsight')} | {vs_lc} | {vs_logged} | {seconds:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tau", help=f"{_TAU} (default: found by bench/shared_data.py)")
    parser.add_argument("--sessions", help="folder with the Claude Code sessions (default: shared data)")
    args = parser.parse_args()
    STRATEGIES[LangChainAws1h.name] = LangChainAws1h
    tau = find_data_file(_TAU, args.tau)
    print(
        "| traffic / model | gap s | anchored-tail (ours) | langchain-aws | langchain-aws ttl=1h | as-logged | "
        "hindsight | ours vs langchain-aws | ours vs as-logged | run s |"
    )
    print("|---" * 10 + "|")
    settings = [
        ("tau-bench, Claude Sonnet 4.5, 5 m TTL only", SONNET, ModelTable({SONNET: {"ttls": ["5m"]}}), False),
        ("tau-bench, Claude Sonnet 4.5, 5 m + 1 h TTL", SONNET, ModelTable(), True),
        ("tau-bench, Nova Pro", NOVA, ModelTable(), False),
    ]
    for label, model, table, one_hour in settings:
        for gap in (10.0, 120.0, 600.0):
            names = ["none", "langchain-aws", "anchored-tail", "hindsight"]
            if one_hour:
                names.insert(2, "langchain-aws-1h")
            started = time.perf_counter()
            result = run_replay([tau], model, names, gap_s=gap, combined=False, models=table, force_model=True)
            lc = [n for n in names if n.startswith("langchain-aws")]
            print(_row(label, f"{gap:g}", result, lc, time.perf_counter() - started))
    base = Path(args.sessions) if args.sessions else find_data_file("claude_code/" + _SESSIONS[0]).parent
    for session in _SESSIONS:
        names = ["none", "langchain-aws", "langchain-aws-1h", "anchored-tail", "hindsight"]
        started = time.perf_counter()
        result = run_replay([base / session], SONNET, names, combined=False)
        lc = ["langchain-aws", "langchain-aws-1h"]
        print(_row(f"Claude Code {session[:8]} (own models)", "recorded", result, lc, time.perf_counter() - started))


if __name__ == "__main__":
    main()
