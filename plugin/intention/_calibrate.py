"""Choosing the acceptance threshold from labelled pairs, so that wrong hits stay under a bound.

A labelled pair is ``(stored, asked, same, source)``: would serving ``stored``'s result for ``asked`` be right.
At a threshold ``t`` a pair is *accepted* when no veto fires (`veto`) and
the cosine of the two embeddings is at least ``t``; the *wrong-hit rate* is wrong accepted / accepted (1 -
precision) and the *hit rate* accepted same-pairs / same-pairs.

`pick_threshold` splits the pairs in two halves by a hash of their text (deterministic, independent of
order): it picks on the first half the lowest threshold at which the accepted pairs (all at or above it) of each
source hold at most ``max_error`` wrong hits, and reports the second (held-out) half at it. The pairs the package ships
(``data/calibration_pairs.jsonl``: the package's own paraphrases and hard negatives, a sample of GPTCache's
similar-question pairs, and Banking77 training rows paired with their nearest row of the same and of another
intent; ``data/README.md``) are the default; their sources and per-source figures are in bench/README.md
("With embeddings proposing and a calibrated check accepting").
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from promptcache.intention._meaning import compare
from promptcache.intention._vetoes import veto

__all__ = ["Pair", "Row", "load_pairs", "pick_threshold", "score_pairs", "sweep", "threshold_for"]


@dataclass(frozen=True)
class Pair:
    """A labelled pair: ``stored`` and ``asked`` intentions, whether they mean the same (``same``), its source."""

    stored: str
    asked: str
    same: bool
    source: str = ""


@dataclass(frozen=True)
class Row:
    """One threshold's figures: ``precision`` (correct accepted / accepted; 1.0 when none accepted), ``hit_rate``
    (accepted same-pairs / same-pairs), counts of ``accepted`` and ``wrong``."""

    threshold: float
    precision: float
    hit_rate: float
    accepted: int
    wrong: int


_MOST_PAIRS_BYTES = 1 << 30  # as `promptcache.replay._input_guard.InputLimits.max_file_bytes`


def load_pairs(path: str | Path | None = None) -> list[Pair]:
    """Pairs from a JSONL file, one ``{"stored": str, "asked": str, "same": bool, "source": str}`` per line
    (``source`` optional; blank lines skipped). Default: the package's calibration pairs.

    Raises:
        ValueError: a line that is not such an object (the message gives the line number); ``path`` not a regular
            file of at most 1 GiB (the bound of the replay's input files), or not UTF-8 (the message names it).
        OSError: ``path`` cannot be read.
    """
    if path is None:
        text = files("promptcache.intention").joinpath("data/calibration_pairs.jsonl").read_text(encoding="utf-8")
    else:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MOST_PAIRS_BYTES:  # a pipe would wait, a device never end
            raise ValueError(f"{path}: not a regular file of at most {_MOST_PAIRS_BYTES:,} bytes")
        try:
            text = Path(path).read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            pair = Pair(row["stored"], row["asked"], row["same"], row.get("source", ""))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"line {n}: not a labelled pair ({exc}): {line[:120]!r}") from None
        if not (isinstance(pair.stored, str) and isinstance(pair.asked, str) and isinstance(pair.same, bool)):
            raise ValueError(f"line {n}: stored/asked must be strings and same a bool: {line[:120]!r}")
        if not isinstance(pair.source, str):
            raise ValueError(f"line {n}: source must be a string, got {pair.source!r}: {line[:120]!r}")
        out.append(pair)
    return out


def score_pairs(embeddings: Any, pairs: Sequence[Pair]) -> list[tuple[float, bool]]:
    """``(score, refused)`` per pair, as a lookup would judge it: refused when a veto fires; score 1.0 when the
    lexical normal forms agree (accepted at any threshold); else the cosine of the two embeddings (every distinct
    text embedded once with ``embed_documents``), refused when the word check fails
    (`promptcache.intention._differences`)."""
    import numpy as np

    from promptcache.intention._differences import WordCheck

    words = WordCheck(embeddings)
    texts = sorted({t for p in pairs for t in (p.stored, p.asked)})
    vectors = dict(zip(texts, np.asarray(embeddings.embed_documents(texts), dtype=np.float64)))
    out = []
    for p in pairs:
        a, b = vectors[p.stored], vectors[p.asked]
        denom = float(np.linalg.norm(a) * np.linalg.norm(b)) or 1.0
        if veto(p.asked, p.stored) is not None:
            out.append((0.0, True))
        elif compare(p.asked, p.stored) is None:  # the lexical stage accepts it at any threshold
            out.append((1.0, False))
        else:
            out.append((max(0.0, min(1.0, float(a @ b) / denom)), not words.passes(p.asked, p.stored)))
    return out


def sweep(pairs: Sequence[Pair], scored: Sequence[tuple[float, bool]], thresholds: Iterable[float]) -> list[Row]:
    """A `Row` per threshold."""
    positives = sum(1 for p in pairs if p.same) or 1
    rows = []
    for t in thresholds:
        acc = [p.same for p, (s, v) in zip(pairs, scored) if not v and s >= t]
        wrong = acc.count(False)
        right = len(acc) - wrong
        rows.append(Row(t, right / len(acc) if acc else 1.0, right / positives, len(acc), wrong))
    return rows


def _half(pair: Pair) -> int:
    return hashlib.sha256(f"{pair.stored}\x00{pair.asked}".encode()).digest()[0] & 1


def pick_threshold(
    pairs: Sequence[Pair], scored: Sequence[tuple[float, bool]], max_error: float
) -> tuple[float, Row, Row]:
    """The lowest threshold at which the accepted calibration-half pairs of every source (`Pair.source`) have a
    wrong-hit rate within ``max_error``, with the calibration half's and the held-out half's `Row` at it (all
    sources together). A source of negatives only allows no accepted pair at all.

    Raises:
        ValueError: ``max_error`` outside ``[0, 1]``, or no pairs.
    """
    if isinstance(max_error, bool) or not isinstance(max_error, (int, float)) or not 0.0 <= max_error <= 1.0:
        raise ValueError(f"max_error must be a number in [0, 1], got {max_error!r}")
    if not pairs:
        raise ValueError("no labelled pairs to calibrate on")
    cal = [(p, s) for p, s in zip(pairs, scored) if _half(p) == 0]
    held = [(p, s) for p, s in zip(pairs, scored) if _half(p) == 1]
    # Walk down from the top: the accepted set grows; keep the lowest threshold at which every source's accepted
    # pairs (all at or above it) hold at most max_error wrong hits. Per source, not pooled: a large source of easy
    # positives must not hide a small source of hard negatives.
    ranked = sorted(((s, p.same, p.source) for p, (s, v) in cal if not v), key=lambda x: -x[0])
    chosen = 1.0
    accepted: dict[str, int] = {}
    wrong: dict[str, int] = {}
    for i, (score, same, source) in enumerate(ranked):
        accepted[source] = accepted.get(source, 0) + 1
        wrong[source] = wrong.get(source, 0) + (0 if same else 1)
        boundary = i + 1 == len(ranked) or ranked[i + 1][0] < score
        if boundary and all(wrong[k] <= max_error * accepted[k] for k in accepted):
            chosen = score
    cal_row = sweep([p for p, _ in cal], [s for _, s in cal], [chosen])[0]
    held_row = sweep([p for p, _ in held], [s for _, s in held], [chosen])[0]
    return chosen, cal_row, held_row


_thresholds: dict[tuple[str, float], float] = {}
_lock = threading.Lock()


def threshold_for(embeddings: Any, name: str, max_error: float, pairs: Sequence[Pair] | None = None) -> float:
    """The calibrated threshold of a model (``name``) for ``max_error`` on ``pairs`` (default: the package's),
    computed once per process and model: the pairs are embedded with ``embeddings`` the first time."""
    key = (name, float(max_error))
    with _lock:
        hit = _thresholds.get(key)
    if hit is not None and pairs is None:
        return hit
    use = list(pairs) if pairs is not None else load_pairs()
    value = pick_threshold(use, score_pairs(embeddings, use), max_error)[0]
    if pairs is None:
        with _lock:
            _thresholds[key] = value
    return value
