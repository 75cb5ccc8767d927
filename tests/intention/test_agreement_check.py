"""A match the embeddings accept is refused when another stored intention holding a different result is nearly
tied with it (the vectors cannot say which one is asked for); a rival holding the same result, a vetoed one, or a
clearly weaker one does not block it."""

from __future__ import annotations

import math

from support.intention_embeddings import Table, unit

from promptcache.intention import IntentionMemory
from promptcache.intention._agreement import AGREEMENT_MARGIN, ambiguous

# Word vectors (for the word check) and sentence vectors: "parasol" stands in for "umbrella" (no synonym list
# joins them, so only the embeddings can accept the match); cosines to the query are cos(angle): 18 deg -> 0.951,
# 19 deg -> 0.946, 40 deg -> 0.766.


QUERY = "parasol advice"
BEST = "umbrella advice"
RIVAL = "umbrella advice report"


def memory_with(rival_angle: float, rival_result: str) -> IntentionMemory:
    emb = Table({QUERY: unit(0), BEST: unit(18), RIVAL: unit(rival_angle)})
    memory = IntentionMemory(embeddings=emb, threshold=0.9)
    memory.store("u", BEST, "sunny")
    memory.store("u", RIVAL, rival_result)
    return memory


def test_a_near_tie_with_another_result_is_refused():
    assert math.cos(math.radians(18)) - math.cos(math.radians(19)) < AGREEMENT_MARGIN
    assert memory_with(19, "storm warning").retrieve("u", QUERY) is None


def test_a_near_tie_with_the_same_result_is_served():
    match = memory_with(19, "sunny").retrieve("u", QUERY)
    assert (match.result, match.verified_by) == ("sunny", "embeddings")


def test_a_clearly_weaker_rival_does_not_block():
    match = memory_with(40, "storm warning").retrieve("u", QUERY)
    assert (match.result, match.verified_by) == ("sunny", "embeddings")


class P:
    def __init__(self, score: float, result_hash: str, veto: str | None = None) -> None:
        self.score, self.veto = score, veto
        self.group = [type("R", (), {"result_hash": result_hash})()]


def test_vetoed_rivals_do_not_count():
    best = P(0.95, "a")
    assert ambiguous(best, [best, P(0.95, "b")]) is True
    assert ambiguous(best, [best, P(0.95, "b", veto="numbers")]) is False
    assert ambiguous(best, [best, P(0.95 - AGREEMENT_MARGIN - 0.001, "b")]) is False
