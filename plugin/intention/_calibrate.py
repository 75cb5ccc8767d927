"""Choosing the acceptance threshold from labelled pairs, so that wrong hits stay under a bound.

A labelled pair is ``(stored, asked, same, source)``: would serving ``stored``'s result for ``asked`` be right.
At a threshold ``t`` a pair is *accepted* exactly when ``IntentionMemory(embeddings=..., threshold=t)``, holding
``stored`` as its only memory and no model verifier, serves it for ``asked`` (`score_pairs` gives each pair the
*level* up to which it is accepted): the same exact key at every ``t`` (level 1.0); else, when no veto fires
(`veto`), the same meaning normal form at every ``t`` below 1.0 (level `RULE_LEVEL`: ``threshold=1.0`` is exact
only), else a cosine of the two embeddings at least ``t`` (below 1.0) with the word check passing. The
*wrong-hit rate* is wrong accepted / accepted (1 - precision) and the *hit rate* accepted same-pairs / same-pairs.
The agreement check and the consensus stage need other stored intentions, and the model verifier a model: with one
memory and no model they never decide, so the figures hold for that lookup.

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
import math
import os
import re
import stat
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from promptcache.intention._meaning import compare
from promptcache.intention._vetoes import exact_key, veto

__all__ = [
    "CONFIDENCE",
    "RULE_LEVEL",
    "Pair",
    "Row",
    "held_out_note",
    "load_pairs",
    "pairs_needed",
    "pick_threshold",
    "score_pairs",
    "stated_threshold",
    "sweep",
    "threshold_for",
    "wrong_rate_bound",
]

CONFIDENCE = 0.95
"""The confidence of the held-out bound (`wrong_rate_bound`): the usual 95%."""

RULE_LEVEL = math.nextafter(1.0, 0.0)
"""The level of a pair the lexical rule accepts (the largest float below 1.0): accepted at every threshold below 1.0,
not at 1.0 (exact only). A cosine is capped at it too: a cosine of 1.0 between two texts of different exact keys is
not an exact match."""


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


def _check_text(n: int, name: str, value: str) -> None:
    """An intention of a pair must hold a letter or digit and be UTF-8 (no lone surrogate), as `IntentionMemory.store`
    requires of the intentions it stores; raises ValueError naming the line and the field."""
    if not any(ch.isalnum() for ch in value):
        raise ValueError(f"line {n}: {name} must hold a letter or digit, got {value!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"line {n}: {name} holds a lone surrogate (not UTF-8 text): {value!r}") from None


#: The line breaks of a JSONL file (as ``bytes.splitlines`` knows them): not the other breaks of ``str.splitlines``.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def load_pairs(path: str | Path | None = None) -> list[Pair]:
    """Pairs from a JSONL file, one ``{"stored": str, "asked": str, "same": bool, "source": str}`` per line
    (``source`` optional; blank lines skipped; a line ends at ``\n``, ``\r`` or ``\r\n`` only, so a string may hold
    a raw U+2028 or U+0085 as JSON allows). Default: the package's calibration pairs.

    Raises:
        ValueError: a line that is not such an object, or whose ``stored``/``asked`` holds no letter or digit or a
            lone surrogate (the message gives the line number); ``path`` not a regular
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
    # Lines end at \n, \r or \r\n only (the JSONL breaks): str.splitlines also splits at U+2028, U+0085 and
    # other characters JSON allows unescaped inside a string, which would cut such a pair in two.
    for n, line in enumerate(_LINE_BREAK.split(text), 1):
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
        for name, value in (("stored", pair.stored), ("asked", pair.asked)):
            _check_text(n, name, value)
        out.append(pair)
    return out


def score_pairs(embeddings: Any, pairs: Sequence[Pair]) -> list[tuple[float, bool]]:
    """``(level, refused)`` per pair, as a lookup would judge it (accepted at threshold ``t`` when not refused and
    ``level >= t``): level 1.0 when the exact keys agree (`exact_key`: accepted at every threshold, 1.0 included);
    else refused when a veto fires; level `RULE_LEVEL` when the lexical normal forms agree (every threshold below
    1.0); else the cosine of the two embeddings capped at `RULE_LEVEL`, refused when the word check fails
    (`promptcache.intention._differences`).

    Cost: every distinct text is embedded once, in one ``embed_documents`` call, and every content word the word
    check will compare in one more; the cosines are one vectorised product. (Before, the words were embedded pair
    by pair: hundreds of small model calls.)"""
    import numpy as np

    from promptcache.intention._differences import WordCheck, word_units

    if not pairs:
        return []
    texts = list(dict.fromkeys(t for p in pairs for t in (p.stored, p.asked)))
    row = {t: i for i, t in enumerate(texts)}
    matrix = np.asarray(embeddings.embed_documents(texts), dtype=np.float64)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    a = matrix[[row[p.stored] for p in pairs]]
    b = matrix[[row[p.asked] for p in pairs]]
    cosines = np.clip(np.einsum("ij,ij->i", a, b), 0.0, 1.0)
    verdicts = [_verdict(p) for p in pairs]
    words = WordCheck(embeddings)
    todo = {w for p, v in zip(pairs, verdicts) if not v for t in (p.stored, p.asked) for w in word_units(t)}
    if todo:
        words.prepare(sorted(todo))
    out: list[tuple[float, bool]] = []
    for p, v, c in zip(pairs, verdicts, cosines.tolist()):
        if v == "exact":  # the exact stage: at every threshold
            out.append((1.0, False))
        elif v == "veto":
            out.append((0.0, True))
        elif v == "lexical":  # the lexical stage: at every threshold below 1.0
            out.append((RULE_LEVEL, False))
        else:
            out.append((min(float(c), RULE_LEVEL), not words.passes(p.asked, p.stored)))
    return out


def _verdict(p: Pair) -> str:
    """The stage that decides a pair before any cosine, in a lookup's order: ``"exact"``, ``"veto"``, ``"lexical"``,
    or ``""`` (the cosine and the word check decide)."""
    if exact_key(p.asked) == exact_key(p.stored):
        return "exact"
    if veto(p.asked, p.stored) is not None:
        return "veto"
    return "lexical" if compare(p.asked, p.stored) is None else ""


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

    The threshold is stated as a short decimal (`stated_threshold`): the shortest of 3 to 6 decimals that accepts
    the same calibration-half pairs as the lowest level found, so the number printed is the number to pass as
    ``threshold=``; 1.0 when no lower threshold keeps to the bound (exact only).

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
    chosen, below = 1.0, 0.0  # nothing keeps to the bound: exact only
    accepted: dict[str, int] = {}
    wrong: dict[str, int] = {}
    for i, (score, same, source) in enumerate(ranked):
        accepted[source] = accepted.get(source, 0) + 1
        wrong[source] = wrong.get(source, 0) + (0 if same else 1)
        boundary = i + 1 == len(ranked) or ranked[i + 1][0] < score
        if boundary and all(wrong[k] <= max_error * accepted[k] for k in accepted):
            chosen, below = score, (ranked[i + 1][0] if i + 1 < len(ranked) else -1.0)
    chosen = stated_threshold(chosen, below)
    cal_row = sweep([p for p, _ in cal], [s for _, s in cal], [chosen])[0]
    held_row = sweep([p for p, _ in held], [s for _, s in held], [chosen])[0]
    return chosen, cal_row, held_row


def stated_threshold(level: float, below: float) -> float:
    """The shortest decimal (3 to 6 places) ``d`` with ``below < d <= level``: the same pairs have a level at least
    ``d`` as at least ``level`` when no pair's level lies in ``(below, level)``. ``level`` itself when none fits.

    Rounded down, not to the nearest: the number stated must accept the pair at ``level`` (and a lookup's cosine of
    that pair, computed in float32 from vectors embedded one text at a time, may differ from this one in the
    seventh place)."""
    for places in range(3, 7):
        scale = 10.0**places
        n = round(level * scale)
        if n / scale > level:  # rounded up: one step down
            n -= 1
        if n / scale > below:
            return n / scale
    return level


def _binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space (n may be large)."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    lp, lq = math.log(p), math.log1p(-p)
    base = math.lgamma(n + 1)
    return min(
        1.0,
        sum(math.exp(base - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq) for i in range(k + 1)),
    )


def wrong_rate_bound(accepted: int, wrong: int, confidence: float = CONFIDENCE) -> float:
    """The one-sided Clopper-Pearson upper bound of the wrong-hit rate, given ``wrong`` wrong hits among
    ``accepted`` accepted held-out pairs (ints, ``0 <= wrong <= accepted``): the rate is at most this with
    ``confidence`` (1.0 when nothing was accepted). With no wrong hit it is ``1 - (1 - confidence) ** (1 /
    accepted)``, about ``3 / accepted`` at 95% (the "rule of three")."""
    if accepted <= 0 or wrong >= accepted:
        return 1.0
    alpha = 1.0 - confidence
    lo, hi = wrong / accepted, 1.0
    for _ in range(60):  # bisection: the CDF falls as p grows
        mid = (lo + hi) / 2
        if _binomial_cdf(wrong, accepted, mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def pairs_needed(max_error: float, confidence: float = CONFIDENCE) -> int | None:
    """The fewest accepted held-out pairs, none wrong, whose `wrong_rate_bound` is within ``max_error`` (``None``
    for ``max_error`` 0: no finite sample shows a rate of 0; 1 for ``max_error`` 1). 299 for 0.01 at 95%."""
    if max_error <= 0.0:
        return None
    if max_error >= 1.0:
        return 1
    return max(1, math.ceil(math.log(1.0 - confidence) / math.log1p(-max_error)))


def held_out_note(held: Row, held_pairs: int, max_error: float, confidence: float = CONFIDENCE) -> tuple[bool, str]:
    """``(shown, sentence)``: whether the held-out half's accepted pairs show the wrong-hit rate within
    ``max_error`` at ``confidence`` (`wrong_rate_bound`), and a sentence saying so, or saying that the half is too
    small and how many pairs would be needed (`pairs_needed`; the halves are split about evenly, so about twice
    as many accepted pairs in all)."""
    bound = wrong_rate_bound(held.accepted, held.wrong, confidence)
    pct = f"{confidence:.0%}"
    seen = (
        f"the held-out half holds {held_pairs} pairs, {held.accepted} accepted, {held.wrong} wrong: its wrong-hit "
        f"rate is at most {bound:.4f} ({pct} confidence, Clopper-Pearson)"
    )
    if bound <= max_error:
        return True, f"shown: {seen}, within max_error={max_error}."
    need = pairs_needed(max_error, confidence)
    if need is None:
        return False, f"NOT SHOWN: {seen}; max_error=0 cannot be shown by any finite set of pairs."
    share = held.accepted / held_pairs if held_pairs else 0.0
    total = (
        f" (at this threshold's acceptance of {share:.1%}, about {math.ceil(2 * need / share):,} pairs)"
        if share
        else ""
    )
    return False, (
        f"NOT SHOWN: the held-out half is too small to show max_error={max_error}: {seen}. Showing it needs at least "
        f"{need:,} accepted held-out pairs with no wrong hit, so about {2 * need:,} accepted pairs in all{total}; "
        "add labelled pairs."
    )


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
