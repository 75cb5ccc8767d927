"""With a ChatModelVerifier, the model is asked only about the few proposals the vetoes pass, never about all of a
user's memories, and its calls and tokens are counted in ``stats()``."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage

from promptcache.intention import ChatModelVerifier, IntentionMemory
from promptcache.testing import ScriptedChatModel


class Close(Embeddings):
    """Texts about orders on one axis, every other text close to the rest (cosine 0.28 or 1.0 between them)."""

    model = "close"

    def _vec(self, text: str) -> list[float]:
        if "order" in text:
            return [0.0, 0.0, 1.0]
        h = sum(text.encode()) % 97
        return [1.0, 0.75 * (h % 2 * 2 - 1), 0.0]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


def test_model_asked_for_vetted_proposals_only_and_counted():
    model = ScriptedChatModel(
        replies=[AIMessage(content="NO", usage_metadata={"input_tokens": 40, "output_tokens": 1, "total_tokens": 41})],
        cycle=True,
    )
    verifier = ChatModelVerifier(model, max_checks=2)
    memory = IntentionMemory(ttl_s=600, embeddings=Close(), verifier=verifier, threshold=0.99, proposal_floor=0.1)
    for i in range(50):
        memory.store("u1", f"show the status of order number {i}", {"order": i})  # numbers differ: vetoed
    memory.store("u1", "track my parcel", "in transit")
    assert memory.retrieve("u1", "show the status of order number 999") is None
    assert model.calls == 0  # every proposal with another number was vetoed: the model is not asked
    assert memory.retrieve("u1", "where is my parcel now") is None
    assert 1 <= model.calls <= 2  # at most max_checks, of 51 memories
    for messages in model.seen:
        assert "order number" not in messages[1].content
    stats = memory.stats()
    assert (stats.verifier_calls, stats.verifier_input_tokens, stats.verifier_output_tokens) == (
        model.calls,
        40 * model.calls,
        model.calls,
    )
    assert memory.stats(reset=True).verifier_calls == model.calls
    assert memory.stats().verifier_calls == 0


def test_a_yes_is_served_and_names_the_model_stage():
    model = ScriptedChatModel(replies=["YES"])
    memory = IntentionMemory(
        ttl_s=600, embeddings=Close(), verifier=ChatModelVerifier(model), threshold=0.99, proposal_floor=0.1
    )
    memory.store("u1", "track my parcel", "in transit")
    match = memory.retrieve("u1", "where is my parcel now")
    assert (match.result, match.verified_by, model.calls) == ("in transit", "chat-model", 1)
