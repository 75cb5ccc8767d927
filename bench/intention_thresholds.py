"""Compute the calibrated thresholds shipped in ``plugin/intention/data/thresholds.json``.

For the default local model (``promptcache.intention.local_embeddings()``, all-MiniLM-L6-v2 in NumPy) and each
``max_error`` in ``MAX_ERRORS``: the threshold ``IntentionMemory(embeddings=local_embeddings(), max_error=...)``
uses, picked from the package's labelled pairs (``plugin/intention/data/calibration_pairs.jsonl``) exactly as
``IntentionMemory.calibrate()`` picks it (``promptcache.intention._calibrate.pick_threshold``), with the
calibration and held-out halves' figures. The file records the pairs' SHA-256; a test checks it, so re-run this
after editing the pairs.

Run: ``python bench/intention_thresholds.py [--write]`` (about a minute on one idle core: 540 pairs embedded).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

from promptcache.intention import local_embeddings
from promptcache.intention._calibrate import load_pairs, pick_threshold, score_pairs
from promptcache.intention._similarity import EmbeddingsSimilarity

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "plugin" / "intention" / "data" / "calibration_pairs.jsonl"
OUT = ROOT / "plugin" / "intention" / "data" / "thresholds.json"
MAX_ERRORS = (0.0, 0.005, 0.01, 0.02, 0.05)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(ROOT)}")
    ap.add_argument("--cache", help="folder of cached sentence vectors (bench/embed_cache.py); default: none")
    args = ap.parse_args(argv)
    emb: Any = local_embeddings()
    if args.cache:
        from embed_cache import cached

        emb = cached(emb, args.cache)
    name = EmbeddingsSimilarity(emb).name
    pairs = load_pairs(PAIRS)
    scored = score_pairs(emb, pairs)
    table: dict[str, float] = {}
    print(f"{name}: {len(pairs)} pairs")
    print("| max_error | threshold | calibration precision / hit | held-out precision / hit |")
    print("|---|---|---|---|")
    for err in MAX_ERRORS:
        t, cal, held = pick_threshold(pairs, scored, err)
        table[repr(err)] = t  # stated as the short decimal that accepts the same pairs (pick_threshold)
        print(
            f"| {err} | {t} | {cal.precision:.3f} / {cal.hit_rate:.3f} | {held.precision:.3f} / {held.hit_rate:.3f} |"
        )
    if args.write:
        data = {
            "_about": "Written by `python bench/intention_thresholds.py --write`: the threshold picked per max_error "
            "on the package's calibration pairs (their SHA-256 below). What they were measured on: bench/README.md.",
            "pairs_sha256": hashlib.sha256(PAIRS.read_bytes()).hexdigest(),
            "thresholds": {name: table},
        }
        OUT.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
