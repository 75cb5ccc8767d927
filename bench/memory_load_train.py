"""Fit the typed-memory load model (naive Bayes) on the training files and write plugin/memory/load_model.json.

    python bench/memory_load_train.py            # fit, choose the threshold by 5-fold cross-validation, write
    python bench/memory_load_train.py --check    # fit and compare with the shipped file (exit 1 when it differs)
    python bench/memory_load_train.py --select   # the smoothing choice: leave-one-file-out over the training files

Only training files are read (`memory_load_data.TRAIN_FILES`); the held-out files are never read here.

What the model sees: the rows the rules do not decide first (a code name, a pronoun command after an earlier
turn: `ruled`) -- the model never decides those, so it is not fitted on them either. Follow-ups are fitted on
(their words still say something about their class) but rule 4 decides them in use, so the threshold is chosen
on the rows the model itself decides (`model_decides`).

The threshold is set by the stated cost ratio `MISS_COST` (``promptcache.memory._load_model``; ``--miss-cost``),
not by accuracy: over 5-fold cross-validation on those rows (folds by row number mod 5: deterministic), the score
cut with the least ``MISS_COST * work rows called general + general rows called work`` (ties: the lower cut, which
skips more). A wrong skip costs an answer, a wrong load costs tokens.

Smoothing ``--alpha`` (Laplace) 0.02, chosen by ``--select`` from `CANDIDATE_ALPHAS`: the least cross-validated cost
(ties: more smoothing). ``--select`` also prints the threshold each cost ratio of `CANDIDATE_MISS_COSTS` gives, and
a leave-one-file-out check: each training file in turn is held out, the model and its threshold are
made from the other files, and the held-out file's rows the model decides are scored -- how the choice carries
over to questions written another way (each file was written separately, by its own procedure:
tests/data/README.md), which row-wise folds overstate. It is a check, not the criterion: with one file of a style
the others lack (``memory_load_grid.jsonl``) it is dominated by that file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory_load_data import TRAIN_FILES, Row, read_rows  # noqa: E402

from promptcache.memory._classifier import (  # noqa: E402
    MAX_QUESTION_CHARS,
    is_about_asker,
    is_elliptical,
    is_followup,
    is_pronoun_command,
)
from promptcache.memory._code_names import code_names  # noqa: E402
from promptcache.memory._load_model import MISS_COST, MODEL_PATH, LoadModel, features  # noqa: E402

FOLDS = 5
ALPHA = 0.02
CANDIDATE_ALPHAS = (0.02, 0.05, 0.1, 0.2, 0.3, 1.0)
CANDIDATE_MISS_COSTS = (1, 2, 5, 10, 15, 20, 30, 50, 100)


def _pairs(rows: list[Row]) -> list[tuple[list[str], bool]]:
    return [(features(r.question), r.general) for r in rows]


def ruled(row: Row) -> bool:
    """Whether rules 1-3 decide ``row`` before the model: a code name or the asker themself, a pronoun command
    after earlier turns, an
    empty or over-long turn, an elliptical turn right after a work turn."""
    q = row.question
    return (
        bool(code_names(q))
        or is_about_asker(q)
        or (is_pronoun_command(q) and bool(row.history))
        or not q.strip()
        or len(q) > MAX_QUESTION_CHARS
        or (row.previous == "work" and is_elliptical(q))
    )


def model_decides(row: Row) -> bool:
    """Whether the model's threshold decides ``row`` in use: no rule does first (`ruled`), and it is not a
    follow-up of an earlier turn (rule 4 inherits that turn's decision)."""
    return not ruled(row) and not (bool(row.history) and is_followup(row.question))


def cv_scores(rows: list[Row], alpha: float) -> list[tuple[float, bool]]:
    """Out-of-fold ``(score, is_general)`` of the rows of ``rows`` the model decides (fitted on all of ``rows``)."""
    out = []
    for k in range(FOLDS):
        model = LoadModel.fit(_pairs([r for i, r in enumerate(rows) if i % FOLDS != k]), alpha)
        out += [
            (model.score(features(r.question)), r.general)
            for i, r in enumerate(rows)
            if i % FOLDS == k and model_decides(r)
        ]
    return out


def cost(scored: list[tuple[float, bool]], cut: float, miss_cost: float) -> float:
    """``miss_cost * work rows above the cut + general rows at or below it``."""
    return sum(miss_cost if not g else 0 for s, g in scored if s > cut) + sum(1 for s, g in scored if g and s <= cut)


def choose_threshold(scored: list[tuple[float, bool]], miss_cost: float) -> float:
    """The score cut (a midpoint between scores, or just outside them) with the least `cost`; ties: the lowest."""
    values = sorted({s for s, _ in scored})
    cuts = [values[0] - 1.0] + [(a + b) / 2 for a, b in zip(values, values[1:])] + [values[-1] + 1.0]
    return min(cuts, key=lambda c: (cost(scored, c, miss_cost), c))


def make_model(rows: list[Row], alpha: float, miss_cost: float) -> tuple[LoadModel, list[tuple[float, bool]]]:
    """The model fitted on ``rows`` (those no rule decides) with its cross-validated threshold, and the
    out-of-fold scores the threshold was chosen on."""
    fitted = [r for r in rows if not ruled(r)]
    scored = cv_scores(fitted, alpha)
    return LoadModel.fit(_pairs(fitted), alpha, choose_threshold(scored, miss_cost)), scored


def _skips(scored: list[tuple[float, bool]], cut: float) -> str:
    work = [s for s, g in scored if not g]
    general = [s for s, g in scored if g]
    return (
        f"work skipped {sum(s > cut for s in work)}/{len(work)}, general skipped {sum(s > cut for s in general)}/"
        f"{len(general)}"
    )


def select(miss_cost: float) -> float:
    """Print the cross-validated and leave-one-file-out table (module docstring); return the chosen smoothing."""
    results = []
    for alpha in CANDIDATE_ALPHAS:
        fitted, scored = make_model(read_rows(TRAIN_FILES), alpha, miss_cost)
        cv_cost = cost(scored, fitted.threshold, miss_cost)
        work = general = n_work = n_general = 0
        for held in TRAIN_FILES:
            model, _ = make_model(read_rows(tuple(f for f in TRAIN_FILES if f != held)), alpha, miss_cost)
            for r in read_rows((held,)):
                if model_decides(r):
                    said = model.is_general(r.question)
                    work, n_work = work + (said and not r.general), n_work + (not r.general)
                    general, n_general = general + (said and r.general), n_general + r.general
        print(
            f"alpha {alpha:<5}: cross-validated cost {cv_cost:g} ({_skips(scored, fitted.threshold)}); "
            f"leave-one-file-out work skipped {work}/{n_work}, general skipped {general}/{n_general}"
        )
        results.append((cv_cost, -alpha))
    best = -min(results)[1]
    print(f"chosen: alpha {best}")
    _, scored = make_model(read_rows(TRAIN_FILES), best, miss_cost)
    for ratio in CANDIDATE_MISS_COSTS:
        cut = choose_threshold(scored, ratio)
        print(f"miss cost {ratio:<4}: threshold {cut:.4f}, cross-validated {_skips(scored, cut)}")
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--alpha", type=float, default=ALPHA, help=f"Laplace smoothing (default {ALPHA})")
    parser.add_argument("--miss-cost", type=float, default=MISS_COST, help=f"cost ratio (default {MISS_COST})")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--select", action="store_true")
    args = parser.parse_args(argv)
    if args.select:
        select(args.miss_cost)
        return 0
    rows = read_rows(TRAIN_FILES)
    model, scored = make_model(rows, args.alpha, args.miss_cost)
    threshold = model.threshold
    general = [s for s, g in scored if g]
    work = [s for s, g in scored if not g]
    print(
        f"rows {len(rows)}; the model decides {len(scored)} (general {len(general)}, work {len(work)}); "
        f"threshold {threshold:.4f}"
    )
    print(
        f"cross-validated: work skipped {sum(s > threshold for s in work)}/{len(work)}, "
        f"general skipped {sum(s > threshold for s in general)}/{len(general)}"
    )
    data = model.to_json()
    data["meta"] = {
        **data["meta"],
        "miss_cost": args.miss_cost,
        "files": list(TRAIN_FILES),
        "made_by": "python bench/memory_load_train.py",
    }
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
