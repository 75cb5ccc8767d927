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

Run: ``python bench/calibration_pairs.py --gptcache PATH/mock_data.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

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
    out = ROOT / "plugin/intention/data/calibration_pairs.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    sample = gptcache_pairs(data, 1, negatives=True)
    (ROOT / "tests/data/gptcache_similar_sample.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in sample), encoding="utf-8"
    )
    print(f"{len(rows)} calibration pairs, {len(sample)} GPTCache test pairs")


if __name__ == "__main__":
    main()
