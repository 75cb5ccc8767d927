"""Typed memory vs a flat memory list: memory tokens per turn, recall of needed memories, stale facts shown.

Run by hand (offline, no services):  python bench/memory_tokens.py [--json out.json]

Part 1 replays bench/data/memory_scenario.json (hand-written: 3 sessions, 39 questions of which 12 conceptual,
44 memories of all four kinds, project state that is replaced and that goes stale) through a real LangGraph
``StateGraph`` with ``MemoryNode`` + ``MemorySaver`` (one thread per session) on an ``InMemoryStore`` with a
simulated clock. Part 2 replays the real BFCL v4 memory conversations (bfcl_v4_memory_bundle.json, found by bench/shared_data.py):
every user statement becomes a memory (typing rule: `bfcl_kind`), then each of the 155 recall questions is
asked in a fresh thread. Part 3 (bench/memory_conversations.py) replays bench/data/memory_conversations.json: a
multi-session conversation with follow-ups, team questions and facts / project state restated without subjects.

Flat baseline = the beginner's approach (docs/plugins/typed-memory.md): every memory ever written, appended to one list and
sent every turn (no dedupe, no replacement, no expiry). Tokens: tiktoken ``cl100k_base`` (offline copy).

Recall: a needed fact, rule or project-state memory counts as loaded when its text is in the typed block
(whitespace-normalised); a needed reference counts when its pointer (``[short id]``) is in the block, since the
model can fetch the contents with ``read_reference``. ``flat_compact_*`` (not the baseline) is the flat list in the
typed block's compact format, to separate formatting from policy.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from langchain_core.messages import SystemMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.memory import InMemoryStore
from shared_data import find_data_file

from promptcache.cache_points._tokens import get_encoding
from promptcache.integrations.langgraph import MemoryNode, MemoryState
from promptcache.memory import TypedMemoryStore
from promptcache.testing import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "bench" / "data" / "memory_scenario.json"
SYSTEM = "You are a helpful assistant."
T0 = 1_767_258_000.0  # a fixed simulated epoch (day 1, 09:00 UTC); minutes in the scenario are added to it

ENC = get_encoding()  # cl100k_base from the ranks file shipped with promptcache: no download


def tokens(text: str) -> int:
    return len(ENC.encode(text))


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


class State(MessagesState, MemoryState):
    pass


def build_graph(memory: TypedMemoryStore, classifier: Any) -> Any:
    model = ScriptedChatModel(replies=["ok"], cycle=True)

    def call_model(state: dict) -> dict:
        return {"messages": [model.invoke([SystemMessage(SYSTEM), *state["messages"]])]}

    builder = StateGraph(State)
    builder.add_node("memory", MemoryNode(memory, classifier=classifier))
    builder.add_node("model", call_model)
    builder.add_edge(START, "memory")
    builder.add_edge("memory", "model")
    builder.add_edge("model", END)
    return builder.compile(checkpointer=MemorySaver())


def flat_line(event: dict) -> str:
    text = event["content"]
    return f"- {event['description']}: {text}" if event.get("description") else f"- {text}"


def flat_block(written: list[dict]) -> str:
    return "Memories:\n" + "\n".join(flat_line(e) for e in written) if written else ""


def compact_flat_block(written: list[dict]) -> str:
    """Not the baseline: the flat list in the typed block's compact format (no bullets, whitespace collapsed), to
    show how much of the reduction is formatting rather than the typed policy."""
    return "Memories:\n" + "\n".join(one_line(flat_line(e)[2:]) for e in written) if written else ""


def prompt_tokens(block: str, question: str) -> int:
    return tokens(SYSTEM + ("\n\n" + block if block else "")) + tokens(question)


# -- part 1: the scenario ----------------------------------------------------------------------------------------
def live_state(written: list[dict], now_min: float) -> dict[str, str]:
    """subject -> content of the latest project-state write that is still live at ``now_min``."""
    latest: dict[str, dict] = {}
    for e in written:
        if e["kind"] == "project_state":
            latest[e["subject"] if e.get("subject") else e["label"]] = e
    return {s: e["content"] for s, e in latest.items() if e["t_min"] + e.get("ttl_min", 60) > now_min}


def one_line(text: str) -> str:
    """Whitespace runs -> one space (the typed block renders each memory on one line, whitespace collapsed)."""
    return " ".join(text.split())


_POINTER_ID = re.compile(r"^\[([0-9a-f]+)\] ", re.M)


def needed_found(ask: dict, written: list[dict], ids: dict[str, str], block: str) -> tuple[int, int]:
    """(needed, found in ``block``) for one question. A needed user fact, rule or project-state fact counts when its
    text is in the block (whitespace-normalised); a needed reference counts when its pointer (``[short id]`` of the
    stored memory) is in the block -- the model can fetch the contents with ``read_reference``."""
    live = live_state(written, ask["t_min"])
    by_label = {e["label"]: e for e in written}
    flat_block_text = one_line(block)
    pointers = set(_POINTER_ID.findall(block))
    needed = found = 0
    for need in ask["needs"]:
        if need.startswith("state:"):
            if need[6:] not in live:
                continue  # the state it asks about has expired: nothing fresh is needed
            needed += 1
            found += one_line(live[need[6:]]) in flat_block_text
        elif by_label[need]["kind"] == "reference":
            needed += 1
            hash_part = ids[need].split("-", 1)[1]
            found += any(len(p) >= 6 and hash_part.startswith(p) for p in pointers)
        else:
            needed += 1
            found += one_line(by_label[need]["content"]) in flat_block_text
    return needed, found


def needed_contents(ask: dict, written: list[dict]) -> list[str]:
    """The texts a question needs, as they appear in the flat list (the flat list shows references' contents)."""
    live = live_state(written, ask["t_min"])
    by_label = {e["label"]: e["content"] for e in written}
    return [live[n[6:]] for n in ask["needs"] if n.startswith("state:") and n[6:] in live] + [
        by_label[n] for n in ask["needs"] if not n.startswith("state:")
    ]


def stale_shown(shown_state: list[str], written: list[dict], now_min: float) -> int:
    fresh = set(live_state(written, now_min).values())
    return sum(1 for content in shown_state if content not in fresh)


def run_scenario(classifier_name: str, events: list[dict], user: str) -> dict[str, Any]:
    clock = Clock()
    raw = InMemoryStore()
    memory = TypedMemoryStore(raw, clock=clock)
    classifiers = {
        "default": None,
        "oracle": {e["question"]: e["conceptual"] for e in events if e["type"] == "ask"}.__getitem__,
        "never": lambda q: False,
    }
    graph = build_graph(memory, classifiers[classifier_name])
    written: list[dict] = []
    ids: dict[str, str] = {}  # label -> stored memory id
    rows = []
    for e in events:
        clock.now = T0 + e["t_min"] * 60
        if e["type"] == "remember":
            written.append(e)
            ids[e["label"]] = memory.put(
                user,
                e["kind"],
                e["content"],
                subject=e.get("subject"),
                ttl_s=e["ttl_min"] * 60 if e.get("ttl_min") else None,
                metadata={"description": e["description"]} if e.get("description") else None,
            ).id
            continue
        out = graph.invoke(
            {"messages": [("user", e["question"])]}, {"configurable": {"thread_id": e["session"], "user_id": user}}
        )
        typed_block = out["memory_prompt"]
        per_turn_part = typed_block[typed_block.index("Current state:") :] if "Current state:" in typed_block else ""
        flat = flat_block(written)
        needs = needed_contents(e, written)
        needed, typed_hits = needed_found(e, written, ids, typed_block)
        assert needed == len(needs)
        flat_state = [w["content"] for w in written if w["kind"] == "project_state"]
        rows.append(
            {
                "question": e["question"],
                "conceptual": e["conceptual"],
                "session": e["session"],
                "typed_per_turn_part_tokens": tokens(per_turn_part),
                "classified_conceptual": out["memory_turn"]["conceptual"],
                "flat_memory_tokens": tokens(flat),
                "typed_memory_tokens": tokens(typed_block),
                "flat_prompt_tokens": prompt_tokens(flat, e["question"]),
                "typed_prompt_tokens": prompt_tokens(typed_block, e["question"]),
                "flat_compact_memory_tokens": tokens(compact_flat_block(written)),
                "needed": needed,
                "typed_hits": typed_hits,
                "flat_hits": sum(1 for n in needs if n in flat),
                "flat_stale": stale_shown(flat_state, written, e["t_min"]),
                "typed_stale": stale_shown([m["content"] for m in out["memory_project_state"]], written, e["t_min"]),
            }
        )
    result = summarise(rows)
    result["typed_per_turn_part_tokens_per_turn"] = round(
        statistics.mean(r["typed_per_turn_part_tokens"] for r in rows), 1
    )
    result["flat_compact_memory_tokens_per_turn"] = round(
        statistics.mean(r["flat_compact_memory_tokens"] for r in rows), 1
    )
    result["reduction_vs_compact_flat_pct"] = round(
        100 * (1 - sum(r["typed_memory_tokens"] for r in rows) / sum(r["flat_compact_memory_tokens"] for r in rows)), 1
    )
    result["per_session_memory_token_reduction_pct"] = {
        s: summarise([r for r in rows if r["session"] == s])["memory_token_reduction_pct"]
        for s in dict.fromkeys(r["session"] for r in rows)
    }
    return result


def summarise(rows: list[dict]) -> dict[str, Any]:
    def total(k: str) -> int:
        return sum(r[k] for r in rows)

    needed = total("needed")
    return {
        "turns": len(rows),
        "flat_memory_tokens_per_turn": round(statistics.mean(r["flat_memory_tokens"] for r in rows), 1),
        "typed_memory_tokens_per_turn": round(statistics.mean(r["typed_memory_tokens"] for r in rows), 1),
        "memory_token_reduction_pct": round(100 * (1 - total("typed_memory_tokens") / total("flat_memory_tokens")), 1),
        "flat_prompt_tokens_per_turn": round(statistics.mean(r["flat_prompt_tokens"] for r in rows), 1),
        "typed_prompt_tokens_per_turn": round(statistics.mean(r["typed_prompt_tokens"] for r in rows), 1),
        "prompt_token_reduction_pct": round(100 * (1 - total("typed_prompt_tokens") / total("flat_prompt_tokens")), 1),
        "needed_memories": needed,
        "typed_recall_pct": round(100 * total("typed_hits") / needed, 1) if needed else 100.0,
        "flat_recall_pct": round(100 * total("flat_hits") / needed, 1) if needed else 100.0,
        "flat_stale_facts_shown": total("flat_stale"),
        "typed_stale_facts_shown": total("typed_stale"),
        "classifier_errors": sum(
            1 for r in rows if "conceptual" in r and r["conceptual"] != r["classified_conceptual"]
        ),
        "misses": [r.get("question") for r in rows if r["typed_hits"] < r["needed"]],
    }


# -- part 2: BFCL v4 memory conversations ---------------------------------------------------------------------------
_DIRECTIVE = re.compile(
    r"\b(?:please (?:always|never|don't|do not)|(?:always|never) (?:remind|tell|mention|use|"
    r"call|give)|i(?:'d| would) (?:like|prefer) (?:you|it if you)|don't (?:ever )?(?:tell|remind|"
    r"mention|suggest))\b",
    re.I,
)
_POINTER = re.compile(r"https?://|www\.\w", re.I)


def bfcl_kind(scenario: str, text: str) -> str:
    """How a BFCL user statement is typed (written down in bench/README.md).

    notetaker statements are dated work notes and to-dos -> project_state; a statement that tells the assistant how
    to behave -> feedback; one that carries a URL -> reference; everything else (people describing themselves,
    their history, health, finances, studies, purchases) -> user_fact.
    """
    if scenario == "notetaker":
        return "project_state"
    if _DIRECTIVE.search(text):
        return "feedback"
    if _POINTER.search(text):
        return "reference"
    return "user_fact"


def run_bfcl(path: Path, search_k: int) -> dict[str, Any]:
    data = json.loads(path.read_text())
    answers = {a["id"]: a["ground_truth"] for a in data["possible_answers"]}
    kinds: Counter = Counter()
    per: dict[str, dict[str, Any]] = {}
    rows_all, rows_search = [], []
    for scenario, convs in data["prereq_conversations"].items():
        memory = TypedMemoryStore(InMemoryStore(), clock=lambda: T0)
        statements = [m["content"] for c in convs for turn in c["question"] for m in turn if m["role"] == "user"]
        flat = "Memories:\n" + "\n".join(f"- {s}" for s in statements)
        for text in statements:
            kind = bfcl_kind(scenario, text)
            kinds[kind] += 1
            memory.put(scenario, kind, text)
        graph = build_graph(memory, None)
        rows, srows = [], []
        for i, q in enumerate(x for x in data["questions"] if x["scenario"] == scenario):
            question = q["question"][0][0]["content"]
            out = graph.invoke(
                {"messages": [("user", question)]},
                {"configurable": {"thread_id": f"{scenario}-{i}", "user_id": scenario}},
            )
            typed = out["memory_prompt"]
            truth = [str(t).lower() for t in answers[q["id"]]]
            in_flat = any(t in flat.lower() for t in truth)
            base = {
                "question": question,
                "conceptual": False,  # every BFCL question is about the user's data
                "classified_conceptual": out["memory_turn"]["conceptual"],
                "needed": int(in_flat),
                "flat_hits": int(in_flat),
                "flat_memory_tokens": tokens(flat),
                "flat_prompt_tokens": prompt_tokens(flat, question),
                "flat_stale": 0,
                "typed_stale": 0,
            }
            typed_text = one_line(typed).lower()
            rows.append(
                {
                    **base,
                    "typed_hits": int(in_flat and any(one_line(t) in typed_text for t in truth)),
                    "typed_memory_tokens": tokens(typed),
                    "typed_prompt_tokens": prompt_tokens(typed, question),
                }
            )
            # two-step retrieval: filter by kind, then the kind's best `search_k` matches for the question
            picked = []
            for kind in ("feedback", "user_fact", "reference") + (
                () if out["memory_turn"]["conceptual"] else ("project_state",)
            ):
                picked += [m.content for m in memory.search(scenario, kind, question, limit=search_k)]
            two = "Memories:\n" + "\n".join(f"- {p}" for p in picked) if picked else ""
            srows.append(
                {
                    **base,
                    "typed_hits": int(in_flat and any(t in two.lower() for t in truth)),
                    "typed_memory_tokens": tokens(two),
                    "typed_prompt_tokens": prompt_tokens(two, question),
                }
            )
        per[scenario] = summarise(rows)
        rows_all += rows
        rows_search += srows
    return {
        "memories_by_kind": dict(kinds),
        "questions": len(rows_all),
        "answer_in_flat_memory": sum(r["needed"] for r in rows_all),
        "typed": summarise(rows_all),
        f"typed_two_step_top{search_k}": {k: v for k, v in summarise(rows_search).items() if k != "misses"},
        "per_scenario": per,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", type=Path, default=SCENARIO)
    parser.add_argument("--bfcl", help="bfcl_v4_memory_bundle.json (default: found by bench/shared_data.py)")
    parser.add_argument("--search-k", type=int, default=5)
    parser.add_argument(
        "--conversations", type=Path, help="part 3 scenario (default bench/data/memory_conversations.json)"
    )
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    scenario = json.loads(args.scenario.read_text())
    events = scenario["events"]
    results: dict[str, Any] = {
        "tokenizer": ENC.name,
        "scenario": {
            "memories": sum(e["type"] == "remember" for e in events),
            "memories_by_kind": dict(Counter(e["kind"] for e in events if e["type"] == "remember")),
            "turns": sum(e["type"] == "ask" for e in events),
            "conceptual_turns": sum(e["type"] == "ask" and e["conceptual"] for e in events),
        },
    }
    for name in ("default", "oracle", "never"):
        results["scenario"][f"classifier={name}"] = run_scenario(name, events, scenario["user"])
    from memory_conversations import CONVERSATIONS, run_conversations  # part 3 (its own module)

    conv = json.loads((args.conversations or CONVERSATIONS).read_text())
    results["conversations"] = {
        name: run_conversations(conv["events"], conv["user"], clf, subjects)
        for name, clf, subjects in (
            ("default", None, True),
            ("classifier=never (no skipping)", lambda q: False, True),
            ("subject_extractor=False (no derived subjects)", None, False),
        )
    }
    bfcl = find_data_file("bfcl_v4_memory_bundle.json", args.bfcl, required=False)
    if bfcl is not None:
        results["bfcl"] = run_bfcl(bfcl, args.search_k)
    else:
        results["bfcl"] = "skipped: bfcl_v4_memory_bundle.json not found (bench/shared_data.py)"
    text = json.dumps(results, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
