"""Calibrate the consensus stage's gap (``plugin/intention/data/consensus.json``) on two labelled intent sets.

The consensus stage (``promptcache.intention._consensus``) accepts the nearest stored intention when the nearest
``CONSENSUS_NEIGHBOURS`` stored intentions (no veto, at least the proposal floor) hold one result and no other result
is within ``gap`` of the weakest of them. Its gap is picked here from labelled lookups, per source:

- ``banking77``: Banking77's *training* split (10,003 rows; never its test rows, which bench/intention_recall.py
  looks up);
- ``clinc150``: ``bench/data/clinc150_train_sample.jsonl`` (1,500 rows of CLINC150's training split, 10 per intent;
  its source and license beside it).

In each, every fifth row (row index ``i % 5 == 0``) is looked up against a memory holding the other four fifths
(each row's result: its label), with ``local_embeddings()`` (all-MiniLM-L6-v2 in NumPy). Only lookups the earlier
stages (exact, lexical, embeddings) do not accept are counted, as in a lookup. The lookups are split in two halves
by a hash of their text: the gap is picked on the first halves (``pick_gap_per_source``: the lowest gap at which
every source's accepted lookups hold at most ``max_error`` wrong results), and each source's second half is
reported at it.

Run: ``python bench/intention_consensus.py [--cache FOLDER] [--write]`` (sentence vectors cached on disk,
``bench/embed_cache.py``; the first run embeds the 11,503 rows: about 20 minutes on a loaded 2-core machine).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import csv  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

from embed_cache import CachedEmbeddings, cached  # noqa: E402
from shared_data import find_data_file  # noqa: E402

from promptcache.intention import InMemoryIntentionBackend, IntentionMemory  # noqa: E402
from promptcache.intention._consensus import (  # noqa: E402
    CONSENSUS_NEIGHBOURS,
    agreeing,
    pick_gap,
    pick_gap_per_source,
)
from promptcache.intention._local import LocalEmbeddings  # noqa: E402
from promptcache.intention._recall import _accept_cheap, proposals_for  # noqa: E402
from promptcache.intention._steps import run  # noqa: E402
from promptcache.intention._vetoes import exact_key, veto  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "plugin" / "intention" / "data" / "consensus.json"
MAX_ERRORS = (0.0, 0.005, 0.01, 0.02, 0.05)


def _half(text: str) -> int:
    return hashlib.sha256(text.encode()).digest()[0] & 1


def sources() -> dict[str, list[tuple[str, str]]]:
    """Source name -> ``(text, label)`` rows in file order."""
    folder = find_data_file("intent/banking77", None)
    with open(folder / "train.csv", encoding="utf-8") as f:
        banking = [(r["text"], r["category"]) for r in csv.DictReader(f)]
    lines = (ROOT / "bench" / "data" / "clinc150_train_sample.jsonl").read_text(encoding="utf-8").splitlines()
    clinc = [(r["text"], r["intent"]) for r in map(json.loads, lines) if r]
    return {"banking77": banking, "clinc150": clinc}


def observe(emb: CachedEmbeddings, rows: list[tuple[str, str]]) -> tuple[list[tuple[str, float, bool]], int, str]:
    """``(text, gap, right)`` per fold lookup with a vote; the number of fold lookups the earlier stages left; the
    model's similarity name."""
    emb.embed_documents([t for t, _ in rows])
    fold = [r for i, r in enumerate(rows) if i % 5 == 0]
    # Room for every row (the default backend keeps 1,000 memories per user).
    memory = IntentionMemory(InMemoryIntentionBackend(max_memories_per_user=len(rows)), embeddings=emb)
    memory.consensus_gap = None
    for i, (text, label) in enumerate(rows):
        if i % 5:
            memory.store("u", text, label)
    now = memory.clock()
    index = run(memory.indexes.current(memory.backend, memory.similarity, "u", now))
    out: list[tuple[str, float, bool]] = []
    left = 0
    for text, label in fold:
        if index.group(exact_key(text), None, None, now):
            continue  # an exact hit: the consensus stage is never reached
        query = memory.similarity.encode_query(text)
        proposals = proposals_for(index, text, query, memory.proposals, now)
        if not proposals or _accept_cheap(memory, text, proposals):
            continue
        left += 1
        ranked = ((s, index.group(k, None, None, now)) for s, k in index.ranked(query, None, now))
        vote = agreeing(ranked, lambda m: veto(text, m.intention) is not None, memory.proposal_floor)
        if vote is not None:
            got = json.loads(memory.backend.result("u", vote[1][0].result_hash) or b"null")
            out.append((text, vote[2], got == label))
    return out, left, memory.similarity.name


def _cell(part: list[tuple[float, bool]], gap: float) -> str:
    acc = [ok for g, ok in part if g >= gap]
    prec = sum(acc) / len(acc) if acc else 1.0
    return f"{prec:.3f} / {len(acc) / max(1, len(part)):.3f} ({len(acc) - sum(acc)} wrong of {len(acc)})"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", default="/tmp/promptcache-bench-vectors", help="folder of cached sentence vectors")
    ap.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    emb = cached(LocalEmbeddings(), args.cache)
    cal: dict[str, list[tuple[float, bool]]] = {}
    held: dict[str, list[tuple[float, bool]]] = {}
    name = ""
    for source, rows in sources().items():
        observed, left, name = observe(emb, rows)
        cal[source] = [(g, ok) for t, g, ok in observed if _half(t) == 0]
        held[source] = [(g, ok) for t, g, ok in observed if _half(t) == 1]
        print(
            f"{source}: {len(rows)} rows, {len(rows[::5])} fold lookups, {left} left by the earlier stages, "
            f"{len(observed)} with a vote of {CONSENSUS_NEIGHBOURS} (calibration half {len(cal[source])}, "
            f"held-out half {len(held[source])})"
        )
    print(f"{name}: gap picked on every source's calibration half; precision / share of votes accepted")
    print("| max_error | gap | source | calibration half | held-out half |")
    print("|---|---|---|---|---|")
    table: dict[str, float] = {}
    for err in MAX_ERRORS:
        gap = pick_gap_per_source(cal, err)
        if gap is None:
            print(f"| {err} | none | - | - | - |")
            continue
        table[repr(err)] = round(gap, 6)
        for source in cal:
            print(f"| {err} | {gap:.4f} | {source} | {_cell(cal[source], gap)} | {_cell(held[source], gap)} |")
        alone = pick_gap(cal["banking77"], err)
        print(f"| {err} | {'none' if alone is None else f'{alone:.4f}'} | banking77 alone (for comparison) | | |")
    if args.write:
        data = {
            "_about": "Written by `python bench/intention_consensus.py --write`: the consensus stage's gap per "
            "max_error, picked per source on Banking77 training rows and a CLINC150 training sample (every fifth "
            "row looked up against the rest; never a test row). What it was measured on: bench/README.md.",
            "gaps": {name: table},
        }
        OUT.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
