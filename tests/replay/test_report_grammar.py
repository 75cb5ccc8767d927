"""Number agreement in the report's sentences: placements that tie with the recommended one "cost the same", and
logs read through session folders are "its" or "their" by count."""

from __future__ import annotations

from pathlib import Path

from promptcache.replay._decision import decide
from promptcache.replay._engine import DEFAULT_STRATEGIES, run_replay
from promptcache.replay._inputs import MergedInput

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "sample_conversations.json"


def test_two_tied_placements_cost_the_same() -> None:
    result = run_replay([DATA / "bedrock_logs" / "converse.jsonl"], "us.anthropic.claude-sonnet-4-20250514-v1:0")
    decision = decide(result)
    assert decision is not None and decision.action == "switch"
    assert decision.sentence.startswith(
        "Switch to anchored-tail (the default of CachePointChatBedrockConverse and BedrockCachePoints): it costs "
        "33.9% of no caching (langchain-aws, last-message cost the same) against 42.6% of no caching for the log's "
        "own layout"
    )


def test_one_tied_placement_costs_the_same() -> None:
    decision = decide(run_replay([SAMPLE], "anthropic.claude-sonnet-4-20250514-v1:0", DEFAULT_STRATEGIES))
    assert decision is not None and "(langchain-aws costs the same)" in decision.sentence


def test_logs_read_through_their_session_folders() -> None:
    one, four = MergedInput(covered_files=["a.jsonl"]), MergedInput(covered_files=["a.jsonl", "b", "c", "d"])
    assert one.summary() == "counted once: 1 log also read through its session folder (a.jsonl)"
    assert four.summary() == "counted once: 4 logs also read through their session folders (a.jsonl and 3 more)"
