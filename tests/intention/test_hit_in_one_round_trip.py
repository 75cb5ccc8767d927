"""A lookup with embeddings chooses on the index it holds and reads that choice's result with the version check, in
one round trip; when another worker wrote in between, the choice is made again on the updated index, so a held
index never serves a replaced or newly outranked memory."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.intention import IntentionMemory


class Table(Embeddings):
    VECTORS = {
        "show my unpaid invoices": [1.0, 0.0, 0.0],
        "list my unpaid invoices": [0.99, 0.141, 0.0],
        "what is the weather in oslo": [0.0, 0.0, 1.0],
    }

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.VECTORS.get(t, [0.0, 1.0, 0.0]) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def pair(redis_url: str, redis_prefix: str) -> tuple[IntentionMemory, IntentionMemory]:
    a = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix), embeddings=Table(), threshold=0.9)
    b = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix), embeddings=Table(), threshold=0.9)
    return a, b


def test_a_result_replaced_by_another_worker_is_served_new(redis_url, redis_prefix):
    a, b = pair(redis_url, redis_prefix)
    assert a.store("u", "show my unpaid invoices", "3 invoices")
    assert a.retrieve("u", "show my unpaid invoices").result == "3 invoices"  # a holds the index now
    assert b.store("u", "show my unpaid invoices", "4 invoices")
    assert a.retrieve("u", "show my unpaid invoices").result == "4 invoices"
    assert a.retrieve("u", "list my unpaid invoices").result == "4 invoices"


def test_a_memory_stored_by_another_worker_is_found_by_a_held_index(redis_url, redis_prefix):
    a, b = pair(redis_url, redis_prefix)
    assert a.store("u", "what is the weather in oslo", "rain")
    assert a.retrieve("u", "list my unpaid invoices") is None  # a holds an index without invoices
    assert b.store("u", "show my unpaid invoices", "3 invoices")
    match = a.retrieve("u", "list my unpaid invoices")
    assert (match.result, match.intention, match.verified_by) == ("3 invoices", "show my unpaid invoices", "lexical")


async def test_the_async_lookup_reads_the_held_choice_and_sees_another_workers_store(redis_url, redis_prefix):
    a, b = pair(redis_url, redis_prefix)
    assert await a.astore("u", "show my unpaid invoices", "3 invoices")
    assert (await a.aretrieve("u", "show my unpaid invoices")).result == "3 invoices"
    assert await b.astore("u", "show my unpaid invoices", "5 invoices")
    assert (await a.aretrieve("u", "show my unpaid invoices")).result == "5 invoices"
