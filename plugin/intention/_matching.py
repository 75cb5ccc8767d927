"""The similar-match rule: verified candidates only, the best must clear the threshold, and among the candidates
about as good as the best (within ``margin``) the newest wins.

Shared by `IntentionMemory` and the benchmark (bench/intention.py), so the
measured precision is the library's. Candidates reach this rule only after a
`Verifier` said their result answers the query, so intentions holding
different results are not a conflict: tool results change over time, and the newest is the one to serve.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from promptcache.intention._backends import MemoryRecord
from promptcache.intention._normalize import Anchors, anchors, tokens

__all__ = ["anchor_info", "choose"]


def choose(
    verified: Iterable[tuple[float, MemoryRecord]], threshold: float, margin: float
) -> tuple[float, MemoryRecord] | None:
    """The similar match among ``verified`` candidates.

    Args:
        verified: ``(similarity, record)`` pairs (similarity in ``[0, 1]``) whose results a verifier accepted.
        threshold: a candidate needs at least this similarity.
        margin: candidates within ``margin`` of the best similarity count as equally good; of those, the most
            recently stored (``created_at``, then ``id``) wins.

    Returns:
        ``(similarity, record)`` of the match (the chosen record's own similarity), or ``None``.
    """
    eligible = [(s, r) for s, r in verified if s >= threshold]
    if not eligible:
        return None
    best = max(s for s, _ in eligible)
    close = [(s, r) for s, r in eligible if s >= best - margin]
    return max(close, key=lambda sr: (sr[1].created_at, sr[1].id))


@lru_cache(maxsize=65536)
def anchor_info(text: str) -> tuple[Anchors, frozenset[str]]:
    """``(anchors(text), its token set)``, cached: the inputs of `anchors_agree`."""
    return anchors(text), frozenset(tokens(text))
