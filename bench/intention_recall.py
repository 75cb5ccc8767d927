"""Intention cache with embeddings: precision / hit rate per data set and per stage, retrieve_memory recall, and
lookup latency at 1,000 and 10,000 memories per user (in memory and on Redis).

Everything runs through ``IntentionMemory(embeddings=local_embeddings())`` (the library's own decision rule), with
the sentence vectors cached on disk (``bench/embed_cache.py``; a model's vector of a text never changes).

- ``own``: tests/data/intention_paraphrases.tsv (should hit) and intention_hard_negatives.tsv (must miss); one
  memory per pair.
- ``gptcache``: tests/data/gptcache_similar_sample.jsonl (200 GPTCache question pairs never calibrated on): every
  stored question in one user's memory, each rephrasing looked up; a hit is correct when it is the pair's.
- ``banking77``: every training row stored in one user's memory (result: its label); each test row looked up;
  a hit is correct when the labels agree.
- ``gptcache-full``: GPTCache's whole ``mock_data.json`` (``--gptcache PATH``; MIT): every distinct origin stored
  in one user's memory, the rephrasings of the pairs never calibrated on (pair index not a multiple of 5) looked up;
  a hit is correct when it serves the pair's own origin. The file holds near-duplicate origins (the same question
  generated twice in other words), so a strict "wrong" is often another wording of the same question.
- ``qqp``: Quora duplicate-question pairs as GPTCache ships them (``examples/benchmark/similiar_qqp.json.gz``,
  ``--qqp PATH`` of the unpacked JSON; Quora's terms, read by path, not copied): 500 pairs drawn with a fixed seed,
  every origin stored, each duplicate looked up; correct when it serves its own origin.
- ``mrpc``: the Microsoft Research Paraphrase Corpus test split (``--mrpc PATH`` of ``msr_paraphrase_test.txt``;
  Microsoft's research licence, read by path, not copied): 400 labelled pairs drawn with a fixed seed, one memory per
  pair: sentence 1 stored, sentence 2 looked up; a hit on a pair labelled 0 is wrong.
- ``calibration``: the package's labelled pairs (``plugin/intention/data/calibration_pairs.jsonl``) scored as a
  lookup judges them, per source and per half (the calibration half the threshold is picked on, and the held-out
  half), at the calibrated threshold.
- ``agreement``: how `promptcache.intention._agreement.AGREEMENT_MARGIN` was chosen, on Banking77 *training* rows
  only: every fifth training row looked up against the other training rows, precision / hit rate per margin.
- ``tool``: for each paraphrase pair, the stored intention among 100 other memories (other pairs' intentions and
  hard negatives); whether ``suggest`` (what ``retrieve_memory`` lists) holds it among its 3 candidates.
- ``latency``: N random unit vectors stored for one user, ``retrieve`` timed with the query vector cached (the
  model's time is not the lookup's), p50 / p99 over 300 lookups.

Run: ``python bench/intention_recall.py [--parts own,gptcache,banking77,tool,latency] [--redis-url URL]``. BLAS
runs on one thread (``OPENBLAS_NUM_THREADS=1`` unless set): on a shared 2-core machine more threads made the NumPy
encoder about 4 times slower.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import csv  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from embed_cache import cached  # noqa: E402
from shared_data import find_data_file  # noqa: E402

from promptcache.intention import InMemoryIntentionBackend, IntentionMemory  # noqa: E402
from promptcache.intention._local import LocalEmbeddings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def tsv(name: str) -> list[tuple[str, str, str]]:
    out = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        k, a, b = line.split("\t")[:3]
        out.append((k, a, b))
    return out


def own(emb: Any) -> None:
    for name, should in (("intention_paraphrases.tsv", True), ("intention_hard_negatives.tsv", False)):
        pairs = tsv(name)
        stages: Counter[str] = Counter()
        for i, (_, stored, asked) in enumerate(pairs):
            memory = IntentionMemory(embeddings=emb)
            memory.store(f"u{i}", stored, "r")
            match = memory.retrieve(f"u{i}", asked)
            stages[match.verified_by if match else "miss"] += 1
        served = sum(v for k, v in stages.items() if k != "miss")
        what = "hit rate" if should else "wrong"
        print(f"own {name}: {what} {served}/{len(pairs)} = {served / len(pairs):.3f}; by stage {dict(stages)}")


def gptcache(emb: Any) -> None:
    rows = [json.loads(x) for x in (DATA / "gptcache_similar_sample.jsonl").read_text().splitlines() if x.strip()]
    rows = [r for r in rows if r["same"]]  # the rephrasings; each stored question is every other's distractor
    memory = IntentionMemory(embeddings=emb)
    stored = sorted({r["stored"] for r in rows})
    for s in stored:
        memory.store("u", s, s)
    stages: Counter[str] = Counter()
    right = wrong = 0
    for r in rows:
        match = memory.retrieve("u", r["asked"])
        if match is None:
            continue
        ok = match.result == r["stored"]
        right += ok
        wrong += not ok
        stages[match.verified_by + ("" if ok else " (wrong)")] += 1
    hits = right + wrong
    print(
        f"gptcache: {len(stored)} stored, {len(rows)} lookups; hit rate {right / len(rows):.3f}, "
        f"precision {right / hits if hits else 1.0:.3f} ({right} right, {wrong} wrong); by stage {dict(stages)}"
    )


def served(memory: IntentionMemory, lookups: list[tuple[str, str]], name: str, extra: str = "") -> None:
    """Looks up each ``(asked, right result)`` in ``memory``; prints hit rate, precision and the stages."""
    stages: Counter[str] = Counter()
    right = wrong = 0
    for asked, want in lookups:
        match = memory.retrieve("u", asked)
        if match is None:
            continue
        ok = match.result == want
        right += ok
        wrong += not ok
        stages[match.verified_by + ("" if ok else " (wrong)")] += 1
    hits = right + wrong
    print(
        f"{name}: {extra}{len(lookups)} lookups; hit rate {right / len(lookups):.3f}, precision "
        f"{right / hits if hits else 1.0:.3f} ({right} right, {wrong} wrong); by stage {dict(stages)}"
    )


def gptcache_full(emb: Any, path: str) -> None:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    stored = sorted({d["origin"] for d in data})
    lookups = [(d["similar"], d["origin"]) for i, d in enumerate(data) if i % 5]
    emb.embed_documents(stored + [a for a, _ in lookups])
    memory = IntentionMemory(embeddings=emb)
    for s in stored:
        memory.store("u", s, s)
    served(memory, lookups, "gptcache-full (held-out pairs)", f"{len(stored)} stored, ")


def qqp(emb: Any, path: str, count: int = 500) -> None:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    pick = random.Random(11).sample(data, count)
    stored = sorted({d["origin"] for d in pick})
    lookups = [(d["similar"], d["origin"]) for d in pick]
    emb.embed_documents(stored + [a for a, _ in lookups])
    memory = IntentionMemory(embeddings=emb)
    for s in stored:
        memory.store("u", s, s)
    served(memory, lookups, "qqp duplicates", f"{len(stored)} stored, ")


def mrpc(emb: Any, path: str, count: int = 400) -> None:
    with open(path, encoding="utf-8-sig") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    pick = random.Random(5).sample([r for r in rows if len(r) == 5], count)
    emb.embed_documents([t for r in pick for t in (r[3], r[4])])
    stages: Counter[str] = Counter()
    for i, (label, _, _, first, second) in enumerate(pick):
        memory = IntentionMemory(embeddings=emb)
        memory.store(f"u{i}", first, "r")
        match = memory.retrieve(f"u{i}", second)
        stages[("same " if label == "1" else "different ") + (match.verified_by if match else "miss")] += 1
    same = sum(r[0] == "1" for r in pick)
    hit = sum(v for k, v in stages.items() if k.startswith("same ") and not k.endswith("miss"))
    wrong = sum(v for k, v in stages.items() if k.startswith("different ") and not k.endswith("miss"))
    print(
        f"mrpc: {count} pairs ({same} paraphrases); hit rate {hit / same:.3f}, wrong {wrong} of {count - same}, "
        f"precision {hit / (hit + wrong) if hit + wrong else 1.0:.3f}; by stage {dict(stages)}"
    )


def calibration(emb: Any) -> None:
    from promptcache.intention._calibrate import _half, load_pairs, score_pairs, sweep

    pairs = load_pairs()
    memory = IntentionMemory(embeddings=emb)
    t = memory.threshold
    scored = score_pairs(emb, pairs)
    print(f"calibration: threshold {t:.3f} (max_error {memory.max_error})")
    for source in sorted({p.source for p in pairs}):
        for half, name in ((0, "calibration half"), (1, "held-out half")):
            idx = [i for i, p in enumerate(pairs) if p.source == source and _half(p) == half]
            row = sweep([pairs[i] for i in idx], [scored[i] for i in idx], [t])[0]
            same = sum(pairs[i].same for i in idx)
            print(
                f"  {source} {name}: {len(idx)} pairs ({same} same): precision {row.precision:.3f}, "
                f"hit rate {row.hit_rate if same else float('nan'):.3f}, wrong {row.wrong}"
            )


def agreement(emb: Any) -> None:
    import functools

    from promptcache.intention import _recall

    folder = find_data_file("intent/banking77", None)
    train = list(csv.DictReader(open(folder / "train.csv", encoding="utf-8")))
    emb.embed_documents([r["text"] for r in train])
    fold = [r for i, r in enumerate(train) if i % 5 == 0]
    rest = [r for i, r in enumerate(train) if i % 5]
    memory = IntentionMemory(InMemoryIntentionBackend(max_memories_per_user=len(rest)), embeddings=emb)
    for r in rest:
        memory.store("u", r["text"], r["category"])
    original = _recall.ambiguous
    try:
        for margin in (-1.0, 0.0, 0.02, 0.05):  # -1: the check off
            _recall.ambiguous = functools.partial(original, margin=margin)  # type: ignore[assignment]
            served(memory, [(r["text"], r["category"]) for r in fold], f"agreement margin {margin}", "train fold, ")
    finally:
        _recall.ambiguous = original


def banking77(emb: Any, limit: int | None) -> None:
    folder = find_data_file("intent/banking77", None)
    train = list(csv.DictReader(open(folder / "train.csv", encoding="utf-8")))
    test = list(csv.DictReader(open(folder / "test.csv", encoding="utf-8")))
    if limit:
        test = random.Random(7).sample(test, limit)
    emb.embed_documents([r["text"] for r in test] + [r["text"] for r in train])
    # Room for every training row (the default backend keeps 1,000 memories per user).
    memory = IntentionMemory(InMemoryIntentionBackend(max_memories_per_user=len(train)), embeddings=emb)
    for r in train:
        memory.store("u", r["text"], r["category"])
    stages: Counter[str] = Counter()
    right = wrong = 0
    for r in test:
        match = memory.retrieve("u", r["text"])
        if match is None:
            continue
        ok = match.result == r["category"]
        right += ok
        wrong += not ok
        stages[match.verified_by + ("" if ok else " (wrong)")] += 1
    hits = right + wrong
    print(
        f"banking77: {len(train)} stored, {len(test)} lookups; hit rate {hits / len(test):.3f}, precision "
        f"{right / hits if hits else 1.0:.3f} ({right} right, {wrong} wrong); by stage {dict(stages)}"
    )


def tool(emb: Any) -> None:
    paras = tsv("intention_paraphrases.tsv")
    others = [a for _, a, _ in tsv("intention_hard_negatives.tsv")] + [
        b for _, _, b in tsv("intention_hard_negatives.tsv")
    ]
    found = 0
    rng = random.Random(3)
    for i, (_, stored, asked) in enumerate(paras):
        memory = IntentionMemory(embeddings=emb)
        pool = [a for j, (_, a, _) in enumerate(paras) if j != i] + others
        for text in rng.sample(pool, 100):
            memory.store("u", text, "other")
        memory.store("u", stored, "RIGHT")
        found += any(m.result == "RIGHT" for m in memory.suggest("u", asked, count=3))
    print(
        f"retrieve_memory: right earlier result among 3 candidates with 100 other memories: {found}/{len(paras)}"
        f" = {found / len(paras):.3f}"
    )


class RandomVectors:
    """384-dim random unit vectors per text (fixed seed per text); the query's is cached like a warm model."""

    model = "random-384"

    def __init__(self) -> None:
        import numpy as np

        self.np = np
        self.cache: dict[str, list[float]] = {}

    def _vec(self, text: str) -> list[float]:
        hit = self.cache.get(text)
        if hit is None:
            rng = self.np.random.default_rng(abs(hash(text)) % (2**32))
            v = rng.standard_normal(384)
            hit = self.cache[text] = (v / self.np.linalg.norm(v)).tolist()
        return hit

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self._vec(text)


def latency(redis_url: str | None) -> None:
    from langchain_core.embeddings import Embeddings

    class _E(RandomVectors, Embeddings):  # type: ignore[misc]
        pass

    for backend_name in ["memory"] + (["redis"] if redis_url else []):
        for n in (1000, 10000):
            emb = _E()
            if backend_name == "redis":
                from promptcache.integrations._redis_intention import RedisIntentionBackend

                prefix = f"bench:{uuid.uuid4().hex[:8]}:"
                backend: Any = RedisIntentionBackend(url=redis_url, prefix=prefix, max_memories_per_user=n)
            else:
                from promptcache.intention import InMemoryIntentionBackend

                backend = InMemoryIntentionBackend(max_memories_per_user=n)
            memory = IntentionMemory(backend, embeddings=emb, threshold=0.9)
            for i in range(n):
                memory.store("u", f"show the status of order {i} for customer {i * 7}", {"i": i})
            queries = [f"what is the status of order {i} for customer {i * 7}" for i in range(300)]
            for q in queries:
                emb.embed_query(q)
            memory.retrieve("u", queries[0])  # warm: the user's index built once
            times = []
            for q in queries:
                t = time.perf_counter()
                memory.retrieve("u", q)
                times.append((time.perf_counter() - t) * 1000)
            times.sort()
            p50 = statistics.median(times)
            p99 = times[int(len(times) * 0.99) - 1]
            print(f"latency {backend_name} {n} memories: p50 {p50:.2f} ms, p99 {p99:.2f} ms")
            if backend_name == "redis":
                memory.forget("u")
                backend.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default="own,gptcache,banking77,tool,latency")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    ap.add_argument("--cache", default="/tmp/promptcache-bench-vectors", help="folder of cached sentence vectors")
    ap.add_argument("--gptcache", help="GPTCache examples/benchmark/mock_data.json (part gptcache-full)")
    ap.add_argument("--qqp", help="GPTCache's similiar_qqp.json, unpacked (part qqp)")
    ap.add_argument("--mrpc", help="MRPC msr_paraphrase_test.txt (part mrpc)")
    ap.add_argument("--no-agreement", action="store_true", help="turn the agreement check off (for comparison)")
    ap.add_argument("--banking77-lookups", type=int, default=0, help="sample this many test rows (0: all)")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    if args.no_agreement:
        from promptcache.intention import _recall

        _recall.ambiguous = lambda *a, **k: False  # type: ignore[assignment]
    emb = cached(LocalEmbeddings(), args.cache) if parts - {"latency"} else None
    if "own" in parts:
        own(emb)
    if "gptcache" in parts:
        gptcache(emb)
    if "tool" in parts:
        tool(emb)
    if "agreement" in parts:
        agreement(emb)
    if "calibration" in parts:
        calibration(emb)
    if "gptcache-full" in parts:
        gptcache_full(emb, args.gptcache)
    if "qqp" in parts:
        qqp(emb, args.qqp)
    if "mrpc" in parts:
        mrpc(emb, args.mrpc)
    if "banking77" in parts:
        banking77(emb, args.banking77_lookups or None)
    if "latency" in parts:
        latency(args.redis_url or None)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
