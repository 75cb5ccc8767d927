"""``promptcache calibrate-intentions PAIRS.jsonl``: precision and hit rate per threshold on the user's own pairs.

Each line of ``PAIRS.jsonl`` is ``{"stored": "...", "asked": "...", "same": true|false, "source": "..."}``
(`load_pairs`). The pairs are embedded with ``local_embeddings()``
(``--model-dir`` for another copy of the model), judged as a lookup judges them (`score_pairs`), and the table
gives, per threshold, precision, hit rate, accepted and wrong counts, overall and per ``source``; then the threshold
``IntentionMemory(max_error=...).calibrate(PAIRS.jsonl)`` picks on these pairs, with its held-out figures.

A row's threshold means what ``IntentionMemory(embeddings=local_embeddings(), threshold=...)`` makes of it: a pair
is accepted at it exactly when that memory, holding the pair's ``stored`` intention alone, serves it for ``asked``
(`promptcache.intention._calibrate`). So the 1.00 row counts exact matches only, as ``threshold=1.0`` serves.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["run"]

_THRESHOLDS = [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0]

_MEANING = [
    "threshold: as IntentionMemory(embeddings=local_embeddings(), threshold=...) applies it, each pair's stored",
    "intention the only memory: the same exact key is accepted at every threshold; else, unless a veto fires, the",
    "same meaning normal form (the lexical stage) at every threshold below 1.00, and any other pair when its cosine",
    "is at least the threshold and the word check passes. 1.00: exact only. The threshold picked for max_error is",
    "the lowest level of an accepted calibration-half pair that keeps the bound, stated as the shortest decimal at",
    "or below that level that accepts the same pairs (so it can lie above every row that accepts them too).",
    "",
]


def _shown(t: float) -> str:
    """A threshold as the command prints it: at least 3 decimals, and every decimal it has (so the number printed is
    the number to pass as ``threshold=``)."""
    return f"{t:.3f}" if round(t, 3) == t else repr(t)


def _source_title(source: str) -> str:
    """A pair ``source`` as a table title: on one line, its control and other unprintable characters (a newline, a
    tab, U+2028) and its backslashes escaped as in a Python string (``"a\\nb"`` for a source holding a newline), so a
    source never breaks the table or passes for another."""
    if not source:
        return "(no source)"
    return "".join(c if c.isprintable() and c != "\\" else c.encode("unicode_escape").decode("ascii") for c in source)


def _table(title: str, rows: list[Any]) -> list[str]:
    lines = [title, f"{'threshold':>9}  {'precision':>9}  {'hit rate':>8}  {'accepted':>8}  {'wrong':>5}"]
    for r in rows:  # no pair accepted: no precision to state
        precision = f"{r.precision:>9.3f}" if r.accepted else f"{'n/a':>9}"
        lines.append(f"{r.threshold:>9.2f}  {precision}  {r.hit_rate:>8.3f}  {r.accepted:>8}  {r.wrong:>5}")
    return lines


def run(args: argparse.Namespace, embeddings: Any = None) -> int:
    """Runs the sub-command; prints the tables. Returns the exit code (0, or 2 for a bad file, option or model folder)."""
    import sys

    from promptcache.intention._calibrate import (
        _half,
        held_out_note,
        load_pairs,
        pick_threshold,
        score_pairs,
        sweep,
    )

    if not 0.0 <= args.max_error <= 1.0:  # checked before any pair is embedded (NaN fails too)
        print(f"promptcache: error: --max-error must be a number in [0, 1], got {args.max_error}", file=sys.stderr)
        return 2
    try:
        pairs = load_pairs(args.pairs)
    except (OSError, ValueError) as exc:
        print(f"promptcache: error: {exc}", file=sys.stderr)
        return 2
    if not pairs:
        print(f"promptcache: error: no pairs in {args.pairs}", file=sys.stderr)
        return 2
    if embeddings is None:
        from promptcache.intention._local import local_embeddings

        try:
            embeddings = local_embeddings(args.model_dir)
        except (OSError, ImportError, ValueError) as exc:
            print(f"promptcache: error: {exc}", file=sys.stderr)
            return 2
    scored = score_pairs(embeddings, pairs)
    lines = _MEANING + _table(f"all pairs ({len(pairs)})", sweep(pairs, scored, _THRESHOLDS))
    for source in sorted({p.source for p in pairs}):
        idx = [i for i, p in enumerate(pairs) if p.source == source]
        sub = [pairs[i] for i in idx]
        lines += [""] + _table(
            f"{_source_title(source)} ({len(idx)})", sweep(sub, [scored[i] for i in idx], _THRESHOLDS)
        )
    t, cal, held = pick_threshold(pairs, scored, args.max_error)
    held_pairs = sum(_half(p) for p in pairs)
    lines += [
        "",
        f"max_error={args.max_error}: threshold {_shown(t)}; calibration half precision {cal.precision:.3f} "
        f"hit rate {cal.hit_rate:.3f}; held-out half precision {held.precision:.3f} hit rate {held.hit_rate:.3f}",
        held_out_note(held, held_pairs, args.max_error)[1],
    ]
    if cal.wrong > args.max_error * cal.accepted:  # even the top threshold accepts too many wrong pairs
        lines.append(
            f"NO THRESHOLD meets max_error={args.max_error}: even at {_shown(t)} the calibration half accepts "
            f"{cal.accepted} pairs of which {cal.wrong} are wrong (pairs that score the same but are labelled "
            "differently); the cache would serve wrong results on such pairs at any threshold."
        )
    print("\n".join(lines))
    return 0
