"""Measure the typed-memory load decision on the held-out labelled questions (never fitted on).

    python bench/memory_load_eval.py             # held-out files: work and general skip rates, per file and group
    python bench/memory_load_eval.py --train     # the same on the training files (fitted on: optimistic)
    python bench/memory_load_eval.py --errors    # also list every wrong decision

A row is decided the way the policy decides a turn: ``is_conceptual_question(question, history)`` with the row's
earlier user turns. "work skipped" = work rows called conceptual (project state wrongly left out; goal <= 1%),
"general skipped" = general rows called conceptual (goal >= 80%).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory_load_data import HELDOUT_FILES, TRAIN_FILES, read_rows  # noqa: E402

from promptcache.memory import is_conceptual_question  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", action="store_true")
    parser.add_argument("--errors", action="store_true")
    args = parser.parse_args(argv)
    rows = read_rows(TRAIN_FILES if args.train else HELDOUT_FILES)
    totals: Counter[tuple[str, str]] = Counter()
    skipped: Counter[tuple[str, str]] = Counter()
    errors = []
    for r in rows:
        said = is_conceptual_question(r.question, r.history)
        cls = "general" if r.general else "work"
        for key in ((r.source, cls), ("all", cls), (r.group, cls)):
            totals[key] += 1
            skipped[key] += said
        if said != r.general:
            errors.append((cls, r.group, r.history[-1:], r.question))
    for key in sorted(totals, key=lambda k: (k[0] != "all", k)):
        print(
            f"{key[0]:45s} {key[1]:8s} skipped {skipped[key]:4d}/{totals[key]:4d} = {skipped[key] / totals[key]:6.1%}"
        )
    if args.errors:
        for e in errors:
            print("  wrong:", *e)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
