"""The consensus stage: the nearest few stored intentions (no veto) holding one result, with no other result within
the calibrated gap, accept a match the cosine threshold and the word check refuse; it records its stage, never
fires with fewer voters than it needs, and a vetoed neighbour is no voter."""

from __future__ import annotations

import math

import pytest
from langchain_core.embeddings import Embeddings

from promptcache.intention import IntentionMemory, local_embeddings
from promptcache.intention._consensus import CONSENSUS_NEIGHBOURS, agreeing, consensus_gap, pick_gap
from promptcache.intention._record import MemoryRecord
from promptcache.intention._similarity import EmbeddingsSimilarity


def unit(angle_deg: float) -> list[float]:
    a = math.radians(angle_deg)
    return [math.cos(a), math.sin(a), 0.0]


class Table(Embeddings):
    def __init__(self, sentences: dict[str, list[float]]) -> None:
        self.sentences = sentences

    def _vec(self, text: str) -> list[float]:
        return self.sentences.get(text) or [0.0, 0.0, 1.0]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


QUERY = "my top-up failed"
NEAR = ["my top up went wrong", "the top up was unsuccessful", "the top-up was declined"]
FAR = "how do i change my pin"


def memory(angles: list[float], results: list[str], far_angle: float = 80.0, gap: float | None = 0.2):
    # Cosines to the query: cos(angle). 30 deg -> 0.866 is under the threshold 0.95 given here, so only the
    # consensus stage can accept.
    emb = Table({QUERY: unit(0), FAR: unit(far_angle), **{t: unit(a) for t, a in zip(NEAR, angles)}})
    mem = IntentionMemory(embeddings=emb, threshold=0.95)
    mem.consensus_gap = gap
    for text, result in zip(NEAR, results):
        mem.store("u", text, result)
    mem.store("u", FAR, "pin help")
    return mem


def test_three_agreeing_neighbours_far_from_any_other_result_are_served_by_consensus():
    match = memory([30, 32, 34], ["top_up_failed"] * 3).retrieve("u", QUERY)
    assert (match.result, match.verified_by, match.intention) == ("top_up_failed", "consensus", NEAR[0])
    assert match.similarity == pytest.approx(math.cos(math.radians(30)))


def test_a_split_vote_is_refused():
    assert memory([30, 32, 34], ["top_up_failed", "top_up_reverted", "top_up_failed"]).retrieve("u", QUERY) is None


def test_another_result_within_the_gap_of_the_weakest_voter_is_refused():
    # weakest voter cos 34 deg = 0.829; the rival at 40 deg = 0.766: gap 0.063 < 0.2
    assert memory([30, 32, 34], ["top_up_failed"] * 3, far_angle=40).retrieve("u", QUERY) is None


def test_the_stage_is_off_without_a_calibrated_gap():
    assert memory([30, 32, 34], ["top_up_failed"] * 3, gap=None).retrieve("u", QUERY) is None


def test_fewer_voters_than_needed_never_decide():
    assert CONSENSUS_NEIGHBOURS == 3
    emb = Table({QUERY: unit(0), NEAR[0]: unit(30), NEAR[1]: unit(32)})
    mem = IntentionMemory(embeddings=emb, threshold=0.95)
    mem.consensus_gap = 0.0
    mem.store("u", NEAR[0], "top_up_failed")
    mem.store("u", NEAR[1], "top_up_failed")
    assert mem.retrieve("u", QUERY) is None


def test_a_vetoed_neighbour_is_no_voter():
    # "top up 20 euros" asks for another number than the query: vetoed, so only two voters remain; a third
    # stored intention of the same amount makes the vote.
    emb = Table(
        {
            "top up 50 euros failed": unit(0),
            "top up 20 euros failed": unit(5),
            "my top up of 50 euros went wrong": unit(30),
            "the 50 euros top up was declined": unit(32),
            "the top up of 50 euros was unsuccessful": unit(34),
        }
    )
    mem = IntentionMemory(embeddings=emb, threshold=0.99)
    mem.consensus_gap = 0.0
    for text in ("top up 20 euros failed", "my top up of 50 euros went wrong", "the 50 euros top up was declined"):
        mem.store("u", text, "top_up_failed")
    assert mem.retrieve("u", "top up 50 euros failed") is None
    mem.store("u", "the top up of 50 euros was unsuccessful", "top_up_failed")
    match = mem.retrieve("u", "top up 50 euros failed")
    assert (match.intention, match.verified_by) == ("my top up of 50 euros went wrong", "consensus")


def record(result_hash: str) -> list[MemoryRecord]:
    return [MemoryRecord("i" + result_hash, "x", "x", None, None, result_hash, 0.0, 1e12, "s")]


def test_agreeing_reports_the_gap_to_the_best_rival_or_the_last_cosine_looked_at():
    ranked = [(0.9, record("a")), (0.85, record("a")), (0.8, record("a")), (0.7, record("a")), (0.6, record("b"))]
    assert agreeing(iter(ranked), lambda r: False, 0.5) == (0.9, ranked[0][1], pytest.approx(0.2))
    # no rival in the pool of 4: the last cosine looked at bounds every other stored intention
    assert agreeing(iter(ranked), lambda r: False, 0.5, pool=4) == (0.9, ranked[0][1], pytest.approx(0.1))
    # the ranking ended without a rival: nothing further down
    assert agreeing(iter(ranked[:3]), lambda r: False, 0.5) == (0.9, ranked[0][1], pytest.approx(0.8))
    # a voter under the floor: no vote
    assert agreeing(iter(ranked), lambda r: False, 0.82) is None


def test_pick_gap_takes_the_lowest_gap_within_the_bound():
    observed = [(0.3, True), (0.25, True), (0.2, False), (0.15, True), (0.1, True), (0.05, False)]
    assert pick_gap(observed, 0.0) == 0.25
    assert pick_gap(observed, 0.2) == 0.1  # 1 wrong of 5
    assert pick_gap(observed, 0.34) == 0.05  # 2 wrong of 6
    assert pick_gap([(0.3, False)], 0.0) is None
    with pytest.raises(ValueError):
        pick_gap(observed, 1.5)


def test_the_default_local_model_ships_a_gap_for_the_default_bound():
    name = EmbeddingsSimilarity(local_embeddings()).name
    gap = consensus_gap(name, 0.01)
    assert gap is not None and 0.0 < gap < 1.0
    assert IntentionMemory(embeddings=local_embeddings()).consensus_gap == gap
    assert consensus_gap(name, 0.5) is None
    assert IntentionMemory().consensus_gap is None
