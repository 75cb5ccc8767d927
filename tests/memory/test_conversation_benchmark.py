"""bench/memory_tokens.py part 3 (the multi-session conversation) gives the figures bench/README.md reports."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from memory_conversations import CONVERSATIONS, run_conversations  # noqa: E402


def _scenario() -> dict:
    return json.loads(CONVERSATIONS.read_text())


def test_scenario_shape():
    events = _scenario()["events"]
    asks = [e for e in events if e["type"] == "ask"]
    assert (len(asks), sum(e["followup"] for e in asks), sum(e["team"] for e in asks)) == (37, 11, 11)
    assert sum(e["conceptual"] for e in asks) == 10
    writes = [e for e in events if e["type"] == "remember"]
    assert len(writes) == 29 and not any("subject" in e for e in writes)  # replacement must come from the text
    assert sum(bool(e.get("replaces")) for e in writes) == 4


def test_default_policy_figures():
    scenario = _scenario()
    result = run_conversations(scenario["events"], scenario["user"])
    assert {k: result[k] for k in ("typed_stale_served", "project_state_loads_missed", "typed_recall_pct")} == {
        "typed_stale_served": 0,
        "project_state_loads_missed": 1,  # "Who is on call this weekend?" after a general question
        "typed_recall_pct": 97.5,
    }
    assert (result["flat_memory_tokens_per_turn"], result["typed_memory_tokens_per_turn"]) == (295.4, 165.2)
    assert result["memory_token_reduction_pct"] == 44.1 and result["flat_stale_served"] == 238
    assert (result["conceptual_turns_skipped"], result["work_turns_skipped"]) == (10, 1)


def test_without_derived_subjects_restated_memories_go_stale():
    scenario = _scenario()
    result = run_conversations(scenario["events"], scenario["user"], subject_extractor=False)
    assert result["typed_stale_served"] == 99 and result["memory_token_reduction_pct"] == 36.6
