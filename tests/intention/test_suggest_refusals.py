"""A match ``suggest`` offers says which check keeps ``retrieve`` from serving it (``IntentionMatch.refused_by``):
a veto, the threshold, the word check, the agreement check, an exact-only memory, or not being among the proposals
``retrieve`` considers; ``""`` for the match ``retrieve`` serves."""

from __future__ import annotations

from support.intention_embeddings import Table, unit

from promptcache.intention import IntentionMemory

# Word vectors (for the word check) and sentence vectors, as in test_agreement_check: "parasol" stands in for
# "umbrella"; a sentence's cosine to the query is cos(angle): 18 deg -> 0.951, 19 deg -> 0.946, 40 deg -> 0.766.
QUERY = "parasol advice"


def memory_with(rival_angle: float, rival_result: str) -> IntentionMemory:
    emb = Table({QUERY: unit(0), "umbrella advice": unit(18), "umbrella advice report": unit(rival_angle)})
    memory = IntentionMemory(embeddings=emb, threshold=0.9)
    memory.store("u", "umbrella advice", "sunny")
    memory.store("u", "umbrella advice report", rival_result)
    return memory


def offered(memory: IntentionMemory, intention: str, count: int = 3) -> list[tuple[str, str, str]]:
    return [(m.intention, m.kind, m.refused_by) for m in memory.suggest("u", intention, count=count)]


def test_a_near_tie_with_another_result_is_refused_by_the_agreement_check() -> None:
    memory = memory_with(19, "storm warning")
    assert memory.retrieve("u", QUERY) is None
    assert offered(memory, QUERY) == [
        ("umbrella advice", "similar", "agreement"),
        ("umbrella advice report", "similar", "agreement"),
    ]


def test_the_served_match_has_no_refusal_and_a_weaker_one_is_under_the_threshold() -> None:
    memory = memory_with(40, "storm warning")
    served = memory.retrieve("u", QUERY)
    assert served is not None and (served.intention, served.refused_by) == ("umbrella advice", "")
    assert offered(memory, QUERY) == [
        ("umbrella advice", "similar", ""),
        ("umbrella advice report", "similar", "threshold"),
    ]


def test_a_vetoed_match_is_refused_by_the_veto_and_the_exact_one_is_not() -> None:
    memory = IntentionMemory(embeddings=Table({}), threshold=0.9)
    memory.store("u", "book 3 seats to Lima", "booked 3")
    memory.store("u", "book seats to Lima", "booked")
    assert [(m.refused_by, m.note) for m in memory.suggest("u", "book 2 seats to Lima")] == [
        ("veto", "differs in numbers"),
        ("veto", "differs in numbers"),
    ]
    assert offered(memory, "book seats to Lima") == [
        ("book seats to Lima", "exact", ""),
        ("book 3 seats to Lima", "partial", "veto"),
    ]


def test_a_content_word_without_a_near_synonym_is_refused_by_the_word_check() -> None:
    # "forecast" (word vector at 90 degrees) has no near-synonym in "parasol advice"; the sentences are close
    memory = IntentionMemory(embeddings=Table({QUERY: unit(0), "umbrella forecast": unit(10), "forecast": unit(90)}),
                             threshold=0.9)  # fmt: skip
    memory.store("u", "umbrella forecast", "sunny")
    assert memory.retrieve("u", QUERY) is None
    assert offered(memory, QUERY) == [("umbrella forecast", "similar", "word-check")]


def test_an_exact_only_memory_and_a_match_outside_the_proposals() -> None:
    exact = IntentionMemory(embeddings=Table({QUERY: unit(0), "umbrella advice": unit(18)}), threshold=1.0)
    exact.store("u", "umbrella advice", "sunny")
    assert offered(exact, QUERY) == [("umbrella advice", "similar", "exact-only")]
    few = IntentionMemory(embeddings=Table({QUERY: unit(0), "umbrella advice": unit(18)}), threshold=0.9, proposals=1)
    few.store("u", "umbrella advice", "sunny")
    few.store("u", "umbrella advice report", "storm warning")  # [0, 0, 1]: cosine 0, ranked second
    assert offered(few, QUERY) == [
        ("umbrella advice", "similar", ""),
        ("umbrella advice report", "similar", "proposals"),
    ]
