"""Part 3 of bench/memory_tokens.py: a multi-session conversation with follow-ups, team questions and restated facts.

bench/data/memory_conversations.json (hand-written): 4 sessions over two days, 37 questions (10 conceptual, 11
follow-ups, 11 team questions without first-person words), 29 memories. Facts and project state are restated
*without* subjects ("My favourite editor is Vim." then "... is Helix."; "The release date of release 2.3 is 12
May." then "... 19 May."), so replacement depends on the store deriving the subject from the text. Each session is
one thread: the questions are asked in order, so a follow-up ("And what is blocking it?") sees the turn before.

Per question it counts, for the typed block (``MemoryNode`` in a ``StateGraph``) and the flat list (every memory
ever written, every turn): memory tokens; the needed memories found (a reference by its pointer); *stale* memories
served (a fact another one restated, project state replaced or past its window); and *missed project-state loads*
(a question needing live project state whose turn did not load it).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from langgraph.store.memory import InMemoryStore
from memory_tokens import T0, Clock, build_graph, flat_block, one_line, tokens

from promptcache.memory import TypedMemoryStore

CONVERSATIONS = Path(__file__).resolve().parent / "data" / "memory_conversations.json"


def _live(written: list[dict], now_min: float) -> dict[str, dict]:
    """slot -> the latest project-state write of that slot still inside its window at ``now_min``."""
    latest: dict[str, dict] = {}
    for e in written:
        if e["kind"] == "project_state":
            latest[e["slot"]] = e
    return {s: e for s, e in latest.items() if e["t_min"] + e["ttl_min"] > now_min}


def _stale(written: list[dict], now_min: float) -> list[str]:
    """Texts that are no longer true at ``now_min``: restated facts, replaced or expired project state."""
    replaced = {e["replaces"] for e in written if e.get("replaces")}
    live_state = {id(e) for e in _live(written, now_min).values()}
    return [
        e["content"]
        for e in written
        if e["label"] in replaced or (e["kind"] == "project_state" and id(e) not in live_state)
    ]


def run_conversations(
    events: list[dict], user: str, classifier: Any = None, subject_extractor: Any = True
) -> dict[str, Any]:
    """Replay ``events`` through a real graph; returns the summary (module docstring). ``classifier`` and
    ``subject_extractor`` go to ``MemoryNode`` / ``TypedMemoryStore`` (the defaults: the built-in rules)."""
    clock = Clock()
    memory = TypedMemoryStore(InMemoryStore(), clock=clock, subject_extractor=subject_extractor)
    graph = build_graph(memory, classifier)
    written: list[dict] = []
    ids: dict[str, str] = {}
    rows = []
    for e in events:
        clock.now = T0 + e["t_min"] * 60
        if e["type"] == "remember":
            written.append(e)
            meta = {"description": e["description"]} if e.get("description") else None
            ttl = e["ttl_min"] * 60 if e.get("ttl_min") else None
            ids[e["label"]] = memory.put(user, e["kind"], e["content"], ttl_s=ttl, metadata=meta).id  # no subject
            continue
        out = graph.invoke(
            {"messages": [("user", e["question"])]}, {"configurable": {"thread_id": e["session"], "user_id": user}}
        )
        block, flat = out["memory_prompt"], flat_block(written)
        typed_text, flat_text = one_line(block), one_line(flat)
        live = _live(written, e["t_min"])
        by_label = {w["label"]: w for w in written}
        needed = found = flat_found = state_needed = state_missed = 0
        for need in e["needs"]:
            if need.startswith("state:"):
                if need[6:] not in live:
                    continue  # nothing fresh to serve
                text = one_line(live[need[6:]]["content"])
                needed += 1
                state_needed += 1
                hit = text in typed_text
                found += hit
                state_missed += not hit
                flat_found += text in flat_text
                continue
            memory_ = by_label[need]
            needed += 1
            flat_found += one_line(memory_["content"]) in flat_text
            if memory_["kind"] == "reference":
                found += f"[{ids[need].split('-', 1)[1][:6]}]" in block
            else:
                found += one_line(memory_["content"]) in typed_text
        stale = _stale(written, e["t_min"])
        rows.append(
            {
                "question": e["question"],
                "conceptual": e["conceptual"],
                "classified_conceptual": out["memory_turn"]["conceptual"],
                "followup": e["followup"],
                "team": e["team"],
                "flat_tokens": tokens(flat),
                "typed_tokens": tokens(block),
                "needed": needed,
                "found": found,
                "flat_found": flat_found,
                "state_needed": state_needed,
                "state_missed": state_missed,
                "typed_stale": sum(one_line(s) in typed_text for s in stale),
                "flat_stale": sum(one_line(s) in flat_text for s in stale),
            }
        )
    return summarise(rows)


def summarise(rows: list[dict]) -> dict[str, Any]:
    """Totals and per-turn means over the question rows of `run_conversations`."""

    def total(k: str) -> int:
        return sum(r[k] for r in rows)

    needed = total("needed")
    return {
        "turns": len(rows),
        "followups": sum(r["followup"] for r in rows),
        "team_questions": sum(r["team"] for r in rows),
        "conceptual_turns": sum(r["conceptual"] for r in rows),
        "flat_memory_tokens_per_turn": round(statistics.mean(r["flat_tokens"] for r in rows), 1),
        "typed_memory_tokens_per_turn": round(statistics.mean(r["typed_tokens"] for r in rows), 1),
        "memory_token_reduction_pct": round(100 * (1 - total("typed_tokens") / total("flat_tokens")), 1),
        "needed_memories": needed,
        "typed_recall_pct": round(100 * total("found") / needed, 1) if needed else 100.0,
        "flat_recall_pct": round(100 * total("flat_found") / needed, 1) if needed else 100.0,
        "typed_stale_served": total("typed_stale"),
        "flat_stale_served": total("flat_stale"),
        "project_state_needed": total("state_needed"),
        "project_state_loads_missed": total("state_missed"),
        "conceptual_turns_skipped": sum(r["classified_conceptual"] for r in rows if r["conceptual"]),
        "work_turns_skipped": sum(r["classified_conceptual"] for r in rows if not r["conceptual"]),
        "misses": [r["question"] for r in rows if r["found"] < r["needed"]],
    }
