"""An exact hit says which stage accepted it (``verified_by == "exact"``), with and without embeddings, in memory and
on Redis: the docs promise every hit names its stage."""

from __future__ import annotations

from promptcache.intention import IntentionMemory


def test_an_exact_hit_without_embeddings_is_verified_by_exact() -> None:
    memory = IntentionMemory()
    memory.store("u1", "list my open invoices", {"invoices": [3, 7]}, tool="invoices", args={"status": "open"})
    match = memory.retrieve("u1", "list my open invoices")
    assert match is not None
    assert (match.kind, match.similarity, match.verified_by, match.result) == (
        "exact",
        1.0,
        "exact",
        {"invoices": [3, 7]},
    )


def test_an_exact_hit_on_redis_is_verified_by_exact(redis_url: str, redis_prefix: str) -> None:
    from promptcache.integrations.redis import RedisIntentionBackend

    memory = IntentionMemory(backend=RedisIntentionBackend(url=redis_url, prefix=redis_prefix))
    memory.store("u1", "list my open invoices", "two invoices")
    match = memory.retrieve("u1", "list my open invoices")
    assert match is not None
    assert (match.kind, match.verified_by, match.result) == ("exact", "exact", "two invoices")
