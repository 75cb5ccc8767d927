"""Memories stored before a vocabulary or model change are still found after it (on Redis): the lookup recomputes
everything it compares from the stored raw intention and re-embeds vectors another model made."""

from __future__ import annotations

from dataclasses import replace

from langchain_core.embeddings import Embeddings

from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.intention import IntentionMemory


class Axis(Embeddings):
    """Two-word-axis vectors under a given model name: the same texts, another model, other numbers."""

    def __init__(self, model: str, flip: bool = False) -> None:
        self.model, self.flip, self.documents = model, flip, 0

    def _vec(self, text: str) -> list[float]:
        words = text.casefold().split()
        v = [float("invoices" in words), float("weather" in words), 0.1]
        return v[::-1] if self.flip else v

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents += len(texts)
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


def test_a_model_change_re_embeds_old_memories_on_read(redis_url, redis_prefix):
    old = IntentionMemory(
        RedisIntentionBackend(url=redis_url, prefix=redis_prefix), embeddings=Axis("v1"), threshold=0.9
    )
    assert old.store("u1", "show my unpaid invoices", "3 invoices")
    new_model = Axis("v2", flip=True)
    new = IntentionMemory(
        RedisIntentionBackend(url=redis_url, prefix=redis_prefix), embeddings=new_model, threshold=0.9
    )
    assert new.retrieve("u1", "Show my unpaid invoices?").verified_by == "exact"
    match = new.retrieve("u1", "please show my unpaid invoices")
    assert (match.kind, match.result) == ("similar", "3 invoices")
    assert new_model.documents == 1  # the old vector was not compared with the new model's: re-embedded once
    new.retrieve("u1", "please show my unpaid invoices")
    assert new_model.documents == 1  # and reused while the user's memories are unchanged


def test_a_vocabulary_change_keeps_memories_reachable_with_embeddings(redis_url, redis_prefix, redis_client):
    # With embeddings the lookup reads the user's records and recomputes what it compares. Without them it asks
    # the meaning index (one round trip, O(1) in the user's memories), as on main: a memory indexed under an old
    # vocabulary's signature is not found there until it is stored again.
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix)
    memory = IntentionMemory(backend, ttl_s=600, embeddings=Axis("v1"), threshold=0.9)
    assert memory.store("u1", "turn off the bedroom lights", "done")
    # A record written under another vocabulary: another meaning signature, another normal form.
    (record,) = backend.records("u1", memory.clock())
    moved = replace(record, signature="m0-old-vocabulary", normalized="turn off bedroom light (old form)")
    key = backend.memory_key("u1", record.id)
    redis_client.set(key, moved.dumps(), keepttl=True)
    backend.put("u1", replace(moved, id=record.id), b'"done"', memory.clock())
    fresh = IntentionMemory(
        RedisIntentionBackend(url=redis_url, prefix=redis_prefix), ttl_s=600, embeddings=Axis("v1"), threshold=0.9
    )
    assert fresh.retrieve("u1", "turn off the bedroom lights").kind == "exact"
    assert fresh.retrieve("u1", "please turn off the bedroom lights").result == "done"
