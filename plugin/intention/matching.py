"""The similar-match rule: anchors must agree, the best candidate must clear the threshold and lead by a margin.

Shared by :class:`~promptcache.intention.memory.IntentionMemory` and the benchmark (bench/intention.py), so the
measured precision is the library's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TypeVar

from promptcache.intention.normalize import Anchors, anchors, tokens

__all__ = ["anchor_info", "pick_similar"]

T = TypeVar("T")


def pick_similar(
    ranked: Iterable[tuple[float, str, T]], threshold: float, margin: float, agrees: Callable[[T], bool]
) -> tuple[float, T] | None:
    """The similar-match rule (see the module docstring).

    Args:
        ranked: ``(score, result_key, item)`` sorted by score, highest first (scores in ``[0, 1]``).
        threshold: the best agreeing item needs at least this score.
        margin: and must lead the best agreeing item with another ``result_key`` by at least this much
            (an item with another result that is nearly as close makes the match ambiguous: a miss).
        agrees: whether an item's numbers and entities agree with the query's.

    Returns:
        ``(score, item)`` of the match, or ``None``.
    """
    best: tuple[float, str, T] | None = None
    for score, key, item in ranked:
        if best is None and score < threshold:
            return None
        if best is not None and best[0] - score >= margin:
            break  # nothing below can be ambiguous any more
        if not agrees(item):
            continue
        if best is None:
            best = (score, key, item)
        elif key != best[1]:
            return None  # ambiguous: another result is nearly as close
    return None if best is None else (best[0], best[2])


@lru_cache(maxsize=65536)
def anchor_info(text: str) -> tuple[Anchors, frozenset[str]]:
    """``(anchors(text), its token set)``, cached: the inputs of :func:`~promptcache.intention.normalize.anchors_agree`."""
    return anchors(text), frozenset(tokens(text))
