"""Of the matches ``suggest`` offers, ``refused_by == ""`` marks exactly the one ``retrieve`` serves (none when
``retrieve`` serves none); another match a stage accepts is ``"not-picked"``: an exact match is served first, else
the most similar accepted one, or the newest within ``margin`` of it."""

from __future__ import annotations

import pytest
from support.intention_embeddings import Table, unit

from promptcache.intention import IntentionMemory

# "parasol" stands in for "umbrella" and "report" for "advice" (the word check); any other text is [0, 0, 1]


def memory_of(stored: list[tuple[str, str]], sentences: dict[str, list[float]], **options: float) -> IntentionMemory:
    now = [0.0]
    memory = IntentionMemory(embeddings=Table(sentences), clock=lambda: now[0], **options)
    for i, (intention, result) in enumerate(stored):
        now[0] = float(i)  # each stored a second after the one before: the last is the newest
        memory.store("u", intention, result)
    now[0] = 10.0
    return memory


WEATHER = [
    ("what is the weather in Paris", "rain"),
    ("what's the weather in Paris", "rain"),
    ("please tell me whats the weather in Paris", "rain"),
]
PARASOL = {"parasol advice": unit(0), "umbrella advice": unit(10), "umbrella advice report": unit(18)}

CASES = {
    # an exact match and a lexical equivalent (a number spelled out): the exact one is served
    "exact-first": (
        [("pay 5 dollars", "paid"), ("pay five dollars", "paid")],
        {},
        {},
        "pay 5 dollars",
        "pay 5 dollars",
        [("pay 5 dollars", ""), ("pay five dollars", "not-picked")],
    ),
    # three lexical equivalents, none exact: the newest is served
    "newest-lexical": (
        WEATHER,
        {},
        {},
        "whats the weather in Paris",
        "please tell me whats the weather in Paris",
        [
            ("please tell me whats the weather in Paris", ""),
            ("what is the weather in Paris", "not-picked"),
            ("what's the weather in Paris", "not-picked"),
        ],
    ),
    # the same, with the equivalent asked exactly stored first (the oldest): still served, exact first
    "exact-oldest": (
        [("whats the weather in Paris", "sun"), *WEATHER],
        {},
        {},
        "whats the weather in Paris",
        "whats the weather in Paris",
        [
            ("whats the weather in Paris", ""),
            ("please tell me whats the weather in Paris", "not-picked"),
            ("what is the weather in Paris", "not-picked"),
            ("what's the weather in Paris", "not-picked"),
        ],
    ),
    # two accepted by embeddings (cosine 0.985 and 0.951, 0.034 apart): the most similar, though the older
    "most-similar": (
        [("umbrella advice", "sunny"), ("umbrella advice report", "sunny")],
        PARASOL,
        {"threshold": 0.9, "margin": 0.02},
        "parasol advice",
        "umbrella advice",
        [("umbrella advice", ""), ("umbrella advice report", "not-picked")],
    ),
    # the same within margin of each other: the newest
    "newest-within-margin": (
        [("umbrella advice", "sunny"), ("umbrella advice report", "sunny")],
        PARASOL,
        {"threshold": 0.9, "margin": 0.05},
        "parasol advice",
        "umbrella advice report",
        [("umbrella advice", "not-picked"), ("umbrella advice report", "")],
    ),
    # nothing served: under the threshold
    "none-served": (
        [("umbrella advice", "sunny"), ("umbrella advice report", "sunny")],
        PARASOL,
        {"threshold": 0.99},
        "parasol advice",
        None,
        [("umbrella advice", "threshold"), ("umbrella advice report", "threshold")],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_unrefused_match_is_the_one_retrieve_serves(case: str) -> None:
    stored, sentences, options, asked, served, rows = CASES[case]
    memory = memory_of(stored, sentences, **options)
    found = memory.retrieve("u", asked)
    assert (found and found.intention) == served
    offered = memory.suggest("u", asked, count=5)
    assert sorted((m.intention, m.refused_by) for m in offered) == sorted(rows)
    unrefused = [m.memory_id for m in offered if m.refused_by == ""]
    assert unrefused == ([] if found is None else [found.memory_id])
