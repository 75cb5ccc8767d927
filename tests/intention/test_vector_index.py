"""The per-user vector index of `IntentionMemory(embeddings=...)`: kept by the backend's version, updated by what
changed, another worker's writes noticed; no calibration on a lookup."""

from __future__ import annotations

import asyncio
import hashlib
import random
from importlib.resources import files

import redis
from langchain_core.embeddings import Embeddings

from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.intention import InMemoryIntentionBackend, IntentionBackend, IntentionMemory
from promptcache.intention._calibrate import Pair
from promptcache.intention._calibrated import shipped_table, shipped_threshold
from promptcache.intention._defaults import DEFAULT_INTENTION_THRESHOLD, DEFAULT_UNCALIBRATED_THRESHOLD
from promptcache.intention._record import MemoryRecord
from promptcache.intention._similarity import EmbeddingsSimilarity
from promptcache.intention._steps import run
from promptcache.intention._vector_index import build, update

NOW = 1_800_000_000.0


class CountingRedis(redis.Redis):
    """A real client that counts round trips (single commands and pipeline executions)."""

    round_trips = 0

    def execute_command(self, *args, **options):
        CountingRedis.round_trips += 1
        return super().execute_command(*args, **options)

    def pipeline(self, transaction=True, shard_hint=None):
        pipe = super().pipeline(transaction, shard_hint)
        original = pipe.execute

        def execute(raise_on_error=True):
            CountingRedis.round_trips += 1
            return original(raise_on_error)

        pipe.execute = execute
        return pipe


class Words(Embeddings):
    """One axis per known word: texts sharing words are close. Counts documents embedded."""

    AXES = ["invoices", "unpaid", "weather", "paris", "lights", "kitchen", "order", "status", "tickets"]

    def __init__(self) -> None:
        self.documents = 0

    def _vec(self, text: str) -> list[float]:
        words = text.casefold().replace("?", "").split()
        return [float(a in words) for a in self.AXES] + [0.05]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents += len(texts)
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


def test_the_index_is_reused_while_the_version_is_unchanged():
    emb = Words()
    memory = IntentionMemory(InMemoryIntentionBackend(), embeddings=emb, threshold=0.9, clock=lambda: NOW)
    assert memory.store("u1", "show my unpaid invoices", "3 invoices")
    assert memory.retrieve("u1", "please show my unpaid invoices").result == "3 invoices"
    index = memory.indexes._users["u1"]
    assert memory.retrieve("u1", "list my unpaid invoices").result == "3 invoices"
    assert memory.indexes._users["u1"] is index  # no write: the same index, nothing re-read or re-hashed
    assert memory.store("u1", "what is the weather in paris", "rain")
    assert memory.retrieve("u1", "the weather in paris please").result == "rain"
    assert memory.indexes._users["u1"] is not index
    assert emb.documents == 2  # one vector per stored intention, none at lookup (no calibration either)


def test_another_workers_store_and_replacement_are_seen_on_redis(redis_url, redis_prefix):
    mine = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix), embeddings=Words(), threshold=0.9)
    other = IntentionMemory(
        RedisIntentionBackend(url=redis_url, prefix=redis_prefix), embeddings=Words(), threshold=0.9
    )
    assert mine.store("u1", "show my unpaid invoices", "3 invoices")
    assert mine.retrieve("u1", "what is the weather in paris") is None
    assert other.store("u1", "what is the weather in paris", "rain")
    assert mine.retrieve("u1", "what is the weather in paris").result == "rain"
    assert other.store("u1", "show my unpaid invoices", "4 invoices")  # replaced elsewhere
    assert mine.retrieve("u1", "please show my unpaid invoices").result == "4 invoices"
    assert other.forget("u1") == 2
    assert mine.retrieve("u1", "show my unpaid invoices") is None


def _record(i: int, key: int, created: float, expires: float = NOW + 600) -> MemoryRecord:
    vec = [random.Random(key).random() for _ in range(4)]
    from promptcache.intention._similarity import _pack

    return MemoryRecord(
        id=f"id{i}",
        intention=f"intention number {key}",
        normalized=f"intention number {key}",
        tool="t" if i % 2 else "u",
        args=None,
        result_hash="h",
        created_at=created,
        expires_at=expires,
        similarity="embeddings:Words:",
        features=_pack(vec),
    )


def _view(index, query, tool):
    ranked = list(index.ranked(query, tool, NOW))
    return [(round(s, 5), k, [r.id for r in index.group(k, tool, None, NOW)]) for s, k in ranked]


def test_an_update_gives_what_a_full_build_gives():
    sim = EmbeddingsSimilarity(Words(), name="embeddings:Words:")
    rng = random.Random(7)
    records = [_record(i, i % 40, float(i)) for i in range(60)]
    index = run(build(1, records, sim, None))
    for step in range(30):
        live = {r.id: r for r in records}
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            if op < 0.4 and live:  # a memory gone (expired and pruned, evicted, deleted)
                live.pop(rng.choice(sorted(live)))
            else:  # a new memory, or one replaced (same id, new time), under a new or an existing key
                i = rng.randint(0, 80)
                live[f"id{i}"] = _record(i, rng.randint(0, 50), 100.0 + step)
        records = list(live.values())
        updated = run(update(index, step + 2, records, sim)) or run(build(step + 2, records, sim, index))
        fresh = run(build(step + 2, records, sim, None))
        query = [rng.random() for _ in range(4)]
        for tool in (None, "t"):
            assert _view(updated, query, tool) == _view(fresh, query, tool)
        index = updated


def test_no_calibration_on_the_first_lookup_and_an_explicit_one():
    emb = Words()
    memory = IntentionMemory(InMemoryIntentionBackend(), embeddings=emb, clock=lambda: NOW)
    assert memory.threshold == DEFAULT_UNCALIBRATED_THRESHOLD  # a model without a shipped threshold
    assert IntentionMemory(similarity=Words()).threshold == DEFAULT_INTENTION_THRESHOLD  # as given there: 0.5
    assert memory.store("u1", "show my unpaid invoices", "3 invoices")
    memory.retrieve("u1", "list my unpaid invoices")
    assert emb.documents == 1  # the stored intention only: no labelled pairs embedded by a lookup
    pairs = [
        Pair("show my unpaid invoices", "list my unpaid invoices", True),
        Pair("show my unpaid invoices", "what is the weather in paris", False),
    ] * 8
    chosen = memory.calibrate(pairs)
    assert memory.threshold == chosen
    assert 0.0 <= chosen <= 1.0


def test_the_default_local_model_has_a_shipped_threshold_for_the_current_pairs():
    name = "embeddings:LocalEmbeddings:sentence-transformers/all-MiniLM-L6-v2"
    assert shipped_threshold(name, 0.01) == 0.863
    assert shipped_threshold(name, 0.5) is None
    pairs = files("promptcache.intention").joinpath("data/calibration_pairs.jsonl").read_bytes()
    # The shipped table was computed on these pairs; after editing them run bench/intention_thresholds.py --write.
    assert shipped_table()["pairs_sha256"] == hashlib.sha256(pairs).hexdigest()


def test_a_redis_lookup_with_embeddings_is_one_round_trip_while_nobody_writes(redis_url, redis_prefix):
    client = CountingRedis.from_url(redis_url)
    memory = IntentionMemory(RedisIntentionBackend(client, prefix=redis_prefix), embeddings=Words(), threshold=0.9)
    for i in range(300):
        assert memory.store("u1", f"show the status of order {i}", {"order": i})
    assert memory.store("u1", "show my unpaid invoices", "3 invoices")
    memory.retrieve("u1", "what is the weather in paris")  # the index is built once
    CountingRedis.round_trips = 0
    assert memory.retrieve("u1", "what is the weather in paris") is None
    assert CountingRedis.round_trips == 1  # prune + version, one pipeline; the vectors are local
    CountingRedis.round_trips = 0
    assert memory.retrieve("u1", "please show my unpaid invoices").result == "3 invoices"
    # The choice made on the index held here names its result, read in the same pipeline as the version.
    assert CountingRedis.round_trips == 1
    assert memory.store("u1", "what is the weather in paris", "rain")
    CountingRedis.round_trips = 0
    assert memory.retrieve("u1", "what is the weather in paris tomorrow") is None
    # This process's own store moved its cached records to the new version: no index read after it.
    assert CountingRedis.round_trips == 1
    client.close()


class Plain(IntentionBackend):
    """A backend with only the required methods: no version token, no meaning index."""

    def __init__(self) -> None:
        self.inner = InMemoryIntentionBackend()

    def put(self, user, record, result, now):
        self.inner.put(user, record, result, now)

    def records(self, user, now):
        return self.inner.records(user, now)

    def result(self, user, result_hash):
        return self.inner.result(user, result_hash)

    def forget(self, user):
        return self.inner.forget(user)


def test_a_backend_without_versions_still_sees_every_change():
    memory = IntentionMemory(Plain(), embeddings=Words(), threshold=0.9, clock=lambda: NOW)
    assert memory.store("u1", "show my unpaid invoices", "3 invoices")
    assert memory.retrieve("u1", "please show my unpaid invoices").result == "3 invoices"
    assert memory.store("u1", "show my unpaid invoices", "4 invoices")  # replaced: a new creation time
    assert memory.retrieve("u1", "please show my unpaid invoices").result == "4 invoices"

    async def both():
        return await memory.aretrieve("u1", "list my unpaid invoices"), await memory.asuggest("u1", "unpaid invoices")

    found, suggested = asyncio.run(both())
    assert (found.result, [m.result for m in suggested]) == ("4 invoices", ["4 invoices"])
