"""Fit the typed-memory load model (naive Bayes) on the training files and write plugin/memory/load_model.json.

    python bench/memory_load_train.py            # fit, choose the threshold by 5-fold cross-validation, write
    python bench/memory_load_train.py --check    # fit and compare with the shipped file (exit 1 when it differs)

The threshold is the lowest score cut at which, over 5-fold cross-validation on the training rows (folds by row
number mod 5: deterministic), at most ``--max-work-skip`` (default 1%, the goal for work questions) of work rows
are called general: a wrong skip costs an answer, a wrong load costs tokens. The rows a rule decides before the
model (code names, a pronoun command after a work turn) are left out of that choice (the model never decides
them) but fitted on. Smoothing ``--alpha`` 0.1 (Laplace; chosen from 0.1 / 0.3 / 1.0).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory_load_data import TRAIN_FILES, Row, read_rows  # noqa: E402

from promptcache.memory._classifier import is_pronoun_command  # noqa: E402
from promptcache.memory._code_names import code_names  # noqa: E402
from promptcache.memory._load_model import MODEL_PATH, LoadModel, features  # noqa: E402

FOLDS = 5


def _pairs(rows: list[Row]) -> list[tuple[list[str], bool]]:
    return [(features(r.question), r.general) for r in rows]


def cv_scores(rows: list[Row], alpha: float) -> list[tuple[float, bool]]:
    """Out-of-fold ``(score, is_general)`` for every row."""
    out = []
    for k in range(FOLDS):
        train = [r for i, r in enumerate(rows) if i % FOLDS != k]
        model = LoadModel.fit(_pairs(train), alpha)
        out += [(model.score(features(r.question)), r.general) for i, r in enumerate(rows) if i % FOLDS == k]
    return out


def choose_threshold(scored: list[tuple[float, bool]], max_work_skip: float) -> float:
    """The lowest cut (a midpoint between scores) with out-of-fold work skips <= ``max_work_skip``."""
    work = sorted(s for s, g in scored if not g)
    allowed = int(max_work_skip * len(work))
    # the cut must sit above all but ``allowed`` work scores
    top = work[-(allowed + 1)]
    above = [s for s, _ in scored if s > top]
    return (top + min(above)) / 2 if above else top


def ruled(row: Row) -> bool:
    """Whether a rule decides ``row`` before the model (a code name, or a pronoun command after earlier turns)."""
    return bool(code_names(row.question)) or (is_pronoun_command(row.question) and bool(row.history))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--alpha", type=float, default=0.1, help="Laplace smoothing (default 0.1)")
    parser.add_argument("--max-work-skip", type=float, default=0.01)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    rows = read_rows(TRAIN_FILES)
    scored = cv_scores([r for r in rows if not ruled(r)], args.alpha)
    threshold = choose_threshold(scored, args.max_work_skip)
    general = [s for s, g in scored if g]
    work = [s for s, g in scored if not g]
    print(f"rows {len(rows)} (general {len(general)}, work {len(work)}); threshold {threshold:.4f}")
    print(
        f"cross-validated: work skipped {sum(s > threshold for s in work)}/{len(work)}, "
        f"general skipped {sum(s > threshold for s in general)}/{len(general)}"
    )
    model = LoadModel.fit(_pairs(rows), args.alpha, threshold)
    data = model.to_json()
    data["meta"] = {**data["meta"], "files": list(TRAIN_FILES), "made_by": "python bench/memory_load_train.py"}
    text = json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"
    if args.check:
        same = MODEL_PATH.read_text(encoding="utf-8") == text
        print("shipped model is up to date" if same else "shipped model differs")
        return 0 if same else 1
    MODEL_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {MODEL_PATH} ({len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
