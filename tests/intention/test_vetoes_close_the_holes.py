"""Case and punctuation that change meaning, pronoun roles, request vs status and filler-only intentions never
match, at every threshold, with the lexical default and with embeddings that score the pairs as identical."""

from __future__ import annotations

import hashlib

import pytest
from langchain_core.embeddings import Embeddings
from support.intention_embeddings import SameVector

from promptcache.intention import IntentionMemory
from promptcache.intention._vetoes import exact_key, veto

HOLES = [
    ("100 MB", "100 Mb", "marks"),
    ("2^10", "2*10", "numbers"),  # "2^10" is one number (a power); "2*10" two
    ("what would you like me to call you", "what would you like to call me", "roles"),
    ("i owe you", "you owe me", "roles"),
    ("could you transfer 500 to mom", "did you transfer 500 to mom", "mood"),
    ("are you doing okay", "okay", "filler"),
    ("turn on the kitchen lights", "turn off the kitchen lights", "antonym"),
    ("lock the front door", "unlock the front door", "antonym"),
    ("is the printer connected", "is the printer not connected", "negation"),
    ("does alice owe bob money", "does bob owe alice money", "roles"),
]


@pytest.mark.parametrize("stored, asked, kind", HOLES)
def test_the_veto_names_the_difference(stored, asked, kind):
    assert veto(asked, stored) == kind
    assert veto(stored, asked) == kind


@pytest.mark.parametrize("stored, asked, kind", HOLES)
@pytest.mark.parametrize("threshold", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("with_embeddings", [False, True])
def test_never_served_at_any_threshold(stored, asked, kind, threshold, with_embeddings):
    emb = SameVector() if with_embeddings else None
    memory = IntentionMemory(ttl_s=600, threshold=threshold, embeddings=emb)
    memory.store("u1", stored, "result")
    assert memory.retrieve("u1", asked) is None
    assert memory.retrieve("u1", stored).kind == "exact"


def test_exact_key_keeps_meaningful_case_and_symbols():
    assert exact_key("100 MB") == "100 MB"
    assert exact_key("100 Mb") == "100 Mb"  # a unit symbol after a number keeps its case
    assert exact_key("  What is the WEATHER in Paris today?  ") == "what is the weather in paris today"
    assert exact_key("FLIGHTS TO SYDNEY") == "flights to sydney"
    assert exact_key("pay 1,000.50, now!") == "pay 1,000.50 now"
    assert exact_key("2^10") != exact_key("2*10")


def test_same_vector_paraphrase_is_served_by_the_embeddings_stage():
    memory = IntentionMemory(ttl_s=600, threshold=0.9, embeddings=SameVector())
    memory.store("u1", "show my unpaid invoices", "3 invoices")
    match = memory.retrieve("u1", "please show me my unpaid invoices")
    assert (match.kind, match.result, match.verified_by) == ("similar", "3 invoices", "lexical")
    assert memory.retrieve("u1", "show my unpaid invoices!").verified_by == "exact"


class HashWords(Embeddings):
    """Deterministic bag of hashed words (64 dims)."""

    model = "hash-words"

    def _vec(self, text: str) -> list[float]:
        v = [0.0] * 64
        for w in text.casefold().split():
            v[hashlib.sha256(w.encode()).digest()[0] % 64] += 1.0
        return v

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


def test_word_check_refuses_an_added_content_word():
    memory = IntentionMemory(ttl_s=600, threshold=0.5, embeddings=HashWords())
    memory.store("u1", "weather in denver", "sunny")
    assert memory.retrieve("u1", "weather alerts in denver") is None
    assert memory.word_check.missing("weather alerts in denver", "weather in denver") == ["alerts"]
