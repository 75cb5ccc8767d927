"""A LangChain Embeddings similarity under the verifier: the vectors rank the verified candidates (and pick what a
model verifier is asked), they never make a match on their own."""

from __future__ import annotations

import math

from langchain_core.embeddings import Embeddings

from promptcache.intention import EmbeddingsSimilarity, IntentionMemory
from promptcache.intention._judges import ChatModelVerifier
from promptcache.testing import ScriptedChatModel

VOCAB = ["flights", "from", "paris", "to", "london", "please", "weather", "in", "oslo", "today", "the"]


class BagOfWords(Embeddings):
    """Deterministic word-count vectors over a fixed vocabulary (word order is invisible to it)."""

    def __init__(self) -> None:
        self.documents = 0
        self.queries = 0

    def _vec(self, text: str) -> list[float]:
        words = text.casefold().replace(",", " ").replace("?", " ").split()
        return [float(words.count(w)) for w in VOCAB]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents += len(texts)
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return self._vec(text)


def cos(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def test_swapped_roles_score_1_0_on_the_vectors_and_are_still_a_miss():
    emb = BagOfWords()
    memory = IntentionMemory(ttl_s=600, similarity=EmbeddingsSimilarity(emb, name="bow"))
    memory.store("u1", "flights from Paris to London", "[AF1]")
    assert cos(emb._vec("flights from Paris to London"), emb._vec("flights from London to Paris")) == 1.0
    assert memory.retrieve("u1", "flights from London to Paris") is None
    match = memory.retrieve("u1", "flights from Paris to London, please")
    expected = cos(emb._vec("flights from Paris to London"), emb._vec("flights from Paris to London, please"))
    assert (match.kind, match.result, match.verified_by) == ("similar", "[AF1]", "lexical")
    assert match.similarity == round(expected, 6)
    assert emb.documents == 1  # the stored intention was embedded once, when stored


def test_a_miss_embeds_the_query_once():
    emb = BagOfWords()
    memory = IntentionMemory(ttl_s=600, similarity=EmbeddingsSimilarity(emb, name="bow"))
    memory.store("u1", "weather in Oslo today", "rain")
    assert memory.retrieve("u1", "flights from Paris to London") is None
    assert emb.queries == 1  # the embeddings propose the candidates: the query is embedded once


async def test_async_lookup_with_embeddings():
    emb = BagOfWords()
    memory = IntentionMemory(ttl_s=600, similarity=EmbeddingsSimilarity(emb, name="bow"))
    await memory.astore("u1", "weather in Oslo today", "rain")
    match = await memory.aretrieve("u1", "please, the weather in Oslo today")
    assert (match.kind, match.result) == ("similar", "rain")


def test_embeddings_pick_what_the_chat_model_is_asked():
    emb = BagOfWords()
    model = ScriptedChatModel(replies=["YES"])
    memory = IntentionMemory(
        ttl_s=600, similarity=EmbeddingsSimilarity(emb, name="bow"), verifier=ChatModelVerifier(model), threshold=0.9
    )
    memory.store("u1", "weather in Oslo today", "rain")
    match = memory.retrieve(
        "u1", "today Oslo weather"
    )  # cosine 0.87: below the threshold, so the model is asked  # a noun compound: not lexically equivalent
    assert (match.result, match.verified_by) == ("rain", "chat-model")
    assert "Earlier request: weather in Oslo today" in model.seen[0][1].content
