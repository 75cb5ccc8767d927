"""Builds the package's labelled calibration pairs (plugin/intention/data/calibration_pairs.jsonl) and the GPTCache
test sample (tests/data/gptcache_similar_sample.jsonl).

Sources (each line carries its ``source``):

- ``own-paraphrases`` / ``own-hard-negatives``: tests/data/intention_paraphrases.tsv (same) and
  tests/data/intention_hard_negatives.tsv (not the same), written for this project.
- ``gptcache``: zilliztech/GPTCache ``examples/benchmark/mock_data.json`` (MIT, commit
  c59fb3a6152a4458b2a070ca183b61c4b614095f), 999 ``{origin, similar}`` question pairs. Pairs 0, 5, 10, ... go to
  the calibration set as positives, each with a negative: its origin against the lexically most similar *other*
  pair's rephrasing (model-free, ``LexicalSimilarity``). The data holds near-duplicate questions under different
  origins, so such a "negative" is often a true paraphrase: only the positives are calibrated on (the negatives
  come from the package's own hard negatives). Pairs 1, 6, 11, ... are the test sample (with those negatives, for
  the record), never calibrated on.
- ``banking77-train``: PolyAI Banking77 ``train.csv`` (CC-BY-4.0, commit 57ec275d8078af65b7731c2a98be812d844a6d6b;
  found with ``bench/shared_data.py``): 200 training rows drawn with a fixed seed (``random.Random(22)``), each
  paired with the lexically most similar *other* training row of its own intent label (same) and of any other label
  (not the same: Banking77's near-miss neighbours, e.g. a failed vs a reverted top-up). Model-free
  (``LexicalSimilarity``), so no embedding model chose them. Only training rows: the test rows the benchmark looks
  up (bench/intention_recall.py, part ``banking77``) are never calibrated on.

PAWS, MRPC and QQP are not shipped: PAWS's repository holds only generation scripts (no copy of its pairs was found
here); MRPC's terms (Microsoft's shared-source research licence) and QQP's (Quora's) do not allow redistribution, so
bench/intention_recall.py reads MRPC from a path (``--mrpc``) and reports it as held-out data.

Run: ``python bench/calibration_pairs.py --gptcache PATH/mock_data.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from pathlib import Path

from shared_data import find_data_file

from promptcache.intention import LexicalSimilarity

ROOT = Path(__file__).resolve().parents[1]


def tsv(path: Path) -> list[tuple[str, str]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        parts = line.split("\t")
        out.append((parts[1], parts[2]))
    return out


def gptcache_pairs(data: list[dict[str, str]], offset: int, negatives: bool) -> list[dict[str, object]]:
    lex = LexicalSimilarity()
    similar = [d["similar"] for d in data]
    prepared = lex.prepare(similar)
    out: list[dict[str, object]] = []
    for i in range(offset, len(data), 5):
        origin = data[i]["origin"]
        out.append({"stored": origin, "asked": data[i]["similar"], "same": True, "source": "gptcache"})
        if not negatives:
            continue
        ranked = sorted(lex.above(origin, prepared, 0.0), key=lambda x: -x[1])
        j = next(k for k, _ in ranked if k != i and data[k]["origin"] != origin)
        out.append({"stored": origin, "asked": similar[j], "same": False, "source": "gptcache"})
    return out


def banking77_pairs(count: int = 200, seed: int = 22) -> list[dict[str, object]]:
    folder = find_data_file("intent/banking77", None)
    assert folder is not None
    with open(folder / "train.csv", encoding="utf-8") as f:
        rows = [(r["text"], r["category"]) for r in csv.DictReader(f)]
    lex = LexicalSimilarity()
    prepared = lex.prepare([t for t, _ in rows])
    out: list[dict[str, object]] = []
    for i in random.Random(seed).sample(range(len(rows)), count):
        text, label = rows[i]
        ranked = sorted(lex.above(text, prepared, 0.0), key=lambda x: (-x[1], x[0]))
        others = [(k, rows[k]) for k, _ in ranked if k != i and rows[k][0].casefold() != text.casefold()]
        same = next(r for _, r in others if r[1] == label)
        other = next(r for _, r in others if r[1] != label)
        out.append({"stored": same[0], "asked": text, "same": True, "source": "banking77-train"})
        out.append({"stored": other[0], "asked": text, "same": False, "source": "banking77-train"})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gptcache", required=True, help="GPTCache examples/benchmark/mock_data.json")
    args = ap.parse_args()
    data = json.loads(Path(args.gptcache).read_text(encoding="utf-8"))
    rows: list[dict[str, object]] = []
    for a, b in tsv(ROOT / "tests/data/intention_paraphrases.tsv"):
        rows.append({"stored": a, "asked": b, "same": True, "source": "own-paraphrases"})
    for a, b in tsv(ROOT / "tests/data/intention_hard_negatives.tsv"):
        rows.append({"stored": a, "asked": b, "same": False, "source": "own-hard-negatives"})
    rows += gptcache_pairs(data, 0, negatives=False)
    rows += banking77_pairs()
    out = ROOT / "plugin/intention/data/calibration_pairs.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    sample = gptcache_pairs(data, 1, negatives=True)
    (ROOT / "tests/data/gptcache_similar_sample.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in sample), encoding="utf-8"
    )
    print(f"{len(rows)} calibration pairs, {len(sample)} GPTCache test pairs")


if __name__ == "__main__":
    main()
