"""``suggest`` gives a match the ``kind`` ``retrieve`` gives it: ``"exact"`` only for the stored intention whose
exact key is the query's, never for another one merely as similar (a cosine of 1.0)."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from promptcache.intention import IntentionMemory


class Same(Embeddings):
    """Every text the same vector: every cosine 1.0."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


def kinds(memory: IntentionMemory, asked: str) -> list[tuple[str, str, float]]:
    return [(m.intention, m.kind, m.similarity) for m in memory.suggest("u", asked, count=5)]


def test_an_accent_apart_at_cosine_1_is_similar_as_retrieve_says() -> None:
    memory = IntentionMemory(embeddings=Same())
    memory.store("u", "order a café", "ordered")
    found = memory.retrieve("u", "order a cafe")
    assert found is not None and (found.kind, found.verified_by) == ("similar", "embeddings")
    assert kinds(memory, "order a cafe") == [("order a café", "similar", 1.0)]


def test_only_the_exact_key_is_exact() -> None:
    memory = IntentionMemory(embeddings=Same())
    memory.store("u", "pay five dollars", "paid")
    memory.store("u", "Pay 5 dollars!", "paid")
    memory.store("u", "pay 6 dollars", "paid")
    found = memory.retrieve("u", "pay 5 dollars")
    assert found is not None and (found.intention, found.kind) == ("Pay 5 dollars!", "exact")
    offered = kinds(memory, "pay 5 dollars")
    assert offered[0] == ("Pay 5 dollars!", "exact", 1.0)  # the exact match first; the others tie at cosine 1.0
    assert sorted(offered[1:]) == [("pay 6 dollars", "partial", 1.0), ("pay five dollars", "similar", 1.0)]
    lexical = memory.retrieve("u", "please pay five dollars")
    assert lexical is not None and lexical.kind == "similar"
    assert {kind for _, kind, _ in kinds(memory, "please pay five dollars")} == {"similar", "partial"}
