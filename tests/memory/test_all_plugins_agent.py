"""One agent with typed memory, ResponseCache, Bedrock cache points and the intention cache (bench/all_plugins.py),
on a small slice of the recorded conversations: the requests the Stubber received keep their cached prefix, and
all four together cost no more than the best single plugin and less than none."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import all_plugins as bench  # noqa: E402
from shared_data import find_data_file  # noqa: E402

TAU = find_data_file("tau_bench_gpt-4o-airline.json", required=False)
BFCL = find_data_file("bfcl_v4_memory_bundle.json", required=False)
pytestmark = pytest.mark.skipif(TAU is None or BFCL is None, reason="shared data not found")


def _prefix_bytes(request: dict, upto_last_point: bool) -> bytes:
    items = bench._items(request)
    if upto_last_point:
        items = items[: max(i for i, (_, b) in enumerate(items) if "cachePoint" in b)]
    return b"".join(json.dumps(b, sort_keys=True).encode() + b"\n" for _, b in items if "cachePoint" not in b)


def test_all_four_keep_the_cached_prefix_and_cost_least():
    rows = json.loads(TAU.read_text())
    tools = bench.make_tools(rows)
    convs = bench.tau_conversations(TAU, 1) + bench.bfcl_conversations(BFCL, 1)
    configs = ("none", "memory", "response", "points", "intention", "all", "all-but-memory-bare")
    sent = {config: bench.run_config(config, convs, tools) for config in configs}
    all_four = sent["all"]
    assert len(all_four) == 25  # 15 model calls in the tau-bench conversation, 10 in the BFCL one
    # requests of one conversation follow each other; each one's cached prefix is a byte prefix of the next
    by_conversation: dict[str, list[dict]] = {}
    for request in all_four:
        first = request["messages"][0]["content"][0]["text"]
        by_conversation.setdefault(first, []).append(request)
    assert len(by_conversation) == 2
    for requests in by_conversation.values():
        for before, after in zip(requests, requests[1:]):
            assert _prefix_bytes(after, False).startswith(_prefix_bytes(before, True))
    cost = {config: bench.price(requests)["input_cost_usd"] for config, requests in sent.items()}
    singles = [cost[c] for c in ("memory", "response", "points", "intention")]
    assert cost["all"] <= min(singles) < cost["none"]
    share = {config: bench.price(sent[config])["cache_read_share"] for config in ("all", "all-but-memory-bare")}
    # memory on does not cost cache reads: its block is cached with the rest (on this slice it adds 1.2 points)
    assert share["all"] >= share["all-but-memory-bare"] - 0.01
