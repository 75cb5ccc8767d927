"""The typed-memory example runs offline and prints what was loaded per turn; the bench scenario has its shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from promptcache.memory._records import memory_key

ROOT = Path(__file__).resolve().parents[2]


def test_example_runs_and_prints_loads_per_turn():
    short_id = memory_key("https://wiki.example.com/shipping/runbook", None)[2:8]
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "typed_memory_graph.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = [line for line in done.stdout.splitlines() if "read from the store" in line]
    assert lines == [
        "  conceptual: False; read from the store: feedback, user_fact, reference, project_state",
        "  conceptual: True; read from the store: nothing (per-thread memories come from the checkpoint)",
        "  conceptual: False; read from the store: project_state",
        "  conceptual: False; read from the store: feedback, user_fact, reference, project_state",
    ]
    assert "ETA for order 42 is 15:00." not in done.stdout  # replaced by the newer fact with the same subject
    assert done.stdout.count("ETA for order 42 moved to 17:00 (customs).") == 3
    assert "Deploy v3.2" not in done.stdout  # expired project state
    # the runbook is shown as a pointer only, and fetched with read_reference
    assert done.stdout.count("https://wiki.example.com/shipping/runbook") == 1
    assert done.stdout.strip().splitlines()[-1] == (
        f"read_reference('{short_id}') -> on-call runbook: https://wiki.example.com/shipping/runbook"
    )


def test_bench_scenario_meets_the_issue_minimums():
    events = json.loads((ROOT / "bench" / "data" / "memory_scenario.json").read_text())["events"]
    memories = [e for e in events if e["type"] == "remember"]
    asks = [e for e in events if e["type"] == "ask"]
    assert len(asks) == 39 and sum(e["conceptual"] for e in asks) == 12
    assert len(memories) == 44
    assert {e["kind"] for e in memories} == {"user_fact", "feedback", "project_state", "reference"}
    assert len({e["session"] for e in events}) == 3
    labels = {e["label"] for e in memories}
    assert all(n.startswith("state:") or n in labels for e in asks for n in e["needs"])
