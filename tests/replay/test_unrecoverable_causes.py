"""Causes whose fix recovers nothing the user controls say why and recover exactly 0: a compaction's re-write
(Claude Code's own, new content written once), an unlogged change of Claude Code's system prompt or tools, and a
prompt under the model's minimum."""

from __future__ import annotations

import json
from pathlib import Path

from promptcache.replay._decision import cause_rows
from promptcache.replay._engine import DEFAULT_STRATEGIES, run_replay
from promptcache.replay._fixes import _prefix_fix

SONNET4 = "anthropic.claude-sonnet-4-20250514-v1:0"
COMPACT = Path(__file__).resolve().parents[1] / "data" / "claude_code" / "compact.jsonl"


def test_a_compaction_recovers_nothing_and_says_why() -> None:
    result = run_replay([COMPACT], SONNET4, DEFAULT_STRATEGIES)
    for name in ("as-logged", "anchored-tail"):
        rows = {row["cause"]: row for row in cause_rows(result, name)}
        changed = rows["prefix-changed"]
        assert (changed["cache_write_tokens"], changed["requests"], changed["recoverable_usd"]) == (303, 1, 0.0)
        assert changed["fix"] == (
            "none you control: a compaction replaces the history with its summary, new content written once (the "
            "history it replaced would not fit the context window)"
        )
    assert result.miss_causes["as-logged"]["prefix-changed"].kinds == {"compaction"}


def test_an_unlogged_prompt_change_names_its_kind() -> None:
    hidden = _prefix_fix({"hidden"})
    assert hidden.startswith("none known: Claude Code changed its own system prompt or tools")
    assert _prefix_fix({"compaction", "hidden"}).endswith(hidden)


def test_below_the_minimum_recovers_nothing(tmp_path: Path) -> None:
    path = tmp_path / "short.json"
    path.write_text(json.dumps([{"role": "user", "content": "hello " * 50}, {"role": "assistant", "content": "hi"}]))
    result = run_replay([path], SONNET4, ["last-message"], combined=False)
    (row,) = cause_rows(result, "last-message")
    assert (row["cause"], row["recoverable_usd"], row["fix"]) == (
        "below-minimum",
        0.0,
        "none: under the model's minimum (1,024 tokens)",
    )
