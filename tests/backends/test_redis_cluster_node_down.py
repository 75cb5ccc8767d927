"""Fail-open on a Redis Cluster whose master dies: the user's call is a miss (never an error), logged once a minute.

Each test starts its own 3-master cluster (the session's cluster stays whole for the other tests), kills the
master holding the keys under test by PID, and checks what the caller sees.
"""

from __future__ import annotations

import logging
import uuid

import pytest
from conftest import service_missing
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from support.redis_cluster import ClusterUnavailable, start_cluster

from promptcache import ResponseCache
from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.integrations.redis import RedisCache
from promptcache.intention import IntentionMemory
from promptcache.testing import ScriptedChatModel


@pytest.fixture
def own_cluster(tmp_path):
    try:
        cluster = start_cluster(tmp_path)
    except ClusterUnavailable as exc:
        service_missing("Redis Cluster", str(exc))
    yield cluster
    cluster.stop()


def warnings_of(caplog, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger and r.levelno == logging.WARNING]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_response_cache_call_is_a_miss_when_its_master_dies(own_cluster, caplog, mode):
    caplog.set_level(logging.WARNING, logger="promptcache")
    # breaker_s=0: every call tries the dead node again, so the once-a-minute log throttle is what is tested.
    cache = RedisCache(url=own_cluster.url, cluster=True, prefix=f"pc:{uuid.uuid4().hex[:8]}:", breaker_s=0)
    model = ScriptedChatModel(replies=["one", "two", "three"])
    agent = create_agent(model, tools=[], system_prompt="s", middleware=[ResponseCache(cache)])

    async def ask() -> str:
        state = {"messages": [HumanMessage("What is the capital of France?")]}
        out = agent.invoke(state) if mode == "sync" else await agent.ainvoke(state)
        return out["messages"][-1]

    first = await ask()
    assert first.content == "one" and first.response_metadata["promptcache"]["cache"] == "miss"
    hit = await ask()
    assert hit.content == "one" and hit.response_metadata["promptcache"]["cache"] == "hit"
    assert model.calls == 1

    own_cluster.kill(own_cluster.port_of_key(cache.full_key(first.response_metadata["promptcache"]["key"])))
    replies = [await ask(), await ask()]
    assert [r.content for r in replies] == ["two", "three"]  # the model answered: a miss, not an error
    assert [r.response_metadata["promptcache"]["cache"] for r in replies] == ["miss", "miss"]
    assert model.calls == 3
    assert cache.failures == 4  # two reads and two writes failed
    logged = warnings_of(caplog, "promptcache.integrations.redis")
    assert len(logged) == 1, logged  # one line a minute, however many calls fail
    assert "treating as a miss" in logged[0]
    cache.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_intention_memory_is_a_miss_when_its_master_dies(own_cluster, caplog, mode):
    caplog.set_level(logging.WARNING, logger="promptcache")
    backend = RedisIntentionBackend(
        url=own_cluster.url, cluster=True, prefix=f"pc:{uuid.uuid4().hex[:8]}:", breaker_s=0
    )
    memory = IntentionMemory(backend, ttl_s=600)
    ask = "How many open tickets do I have?"

    async def store(user: str) -> bool:
        if mode == "sync":
            return memory.store(user, ask, 7, tool="count")
        return await memory.astore(user, ask, 7, tool="count")

    async def retrieve(user: str):
        return memory.retrieve(user, ask) if mode == "sync" else await memory.aretrieve(user, ask)

    # Two users whose keys (one hash tag each) live on different masters.
    users = [f"user-{i}" for i in range(40)]
    by_port = {own_cluster.port_of_key(backend.index_key(u)): u for u in users}
    assert len(by_port) == 3
    doomed_port, doomed = next(iter(by_port.items()))
    survivor = next(u for p, u in by_port.items() if p != doomed_port)
    assert await store(doomed) is True and await store(survivor) is True
    assert (await retrieve(doomed)).result == 7

    own_cluster.kill(doomed_port)
    assert await retrieve(doomed) is None  # a miss
    assert await store(doomed) is False  # not stored, not raised
    assert await retrieve(doomed) is None
    assert (await retrieve(survivor)).result == 7  # the other masters still answer (no circuit break: breaker_s=0)
    logged = warnings_of(caplog, "promptcache.intention")
    assert len(logged) == 1, logged
    backend.close()


def test_placement_store_is_a_miss_when_its_master_dies(own_cluster, caplog):
    from promptcache.cache_points import CachePointPlacement
    from promptcache.integrations.bedrock import PlacementStore

    caplog.set_level(logging.WARNING, logger="promptcache")
    cache = RedisCache(url=own_cluster.url, cluster=True, prefix=f"pc:{uuid.uuid4().hex[:8]}:", breaker_s=0)
    store = PlacementStore(cache)
    model = "us.anthropic.claude-sonnet-4-20250514-v1:0"
    placed = [CachePointPlacement(index=2, fingerprint="f")]
    convs = [f"thread:t{i}" for i in range(30)]
    by_port = {own_cluster.port_of_key(store.cache.full_key(store.key(c, model))): c for c in convs}
    for conv in by_port.values():
        store.save(conv, model, placed)
    doomed_port, doomed = next(iter(by_port.items()))
    survivor = next(c for p, c in by_port.items() if p != doomed_port)
    own_cluster.kill(doomed_port)
    assert store.load(doomed, model) == []  # a miss: the call places its points afresh
    store.save(doomed, model, placed)  # not raised
    assert store.load(survivor, model) == placed
    assert store.cache.failures == 2  # the store's view of the cache (its ``placements:`` namespace) counts them
    assert cache.stats().errors == 2  # ... and the cache's counters, shared by its namespaced views
    assert len(warnings_of(caplog, "promptcache.integrations.redis")) == 1
    cache.close()
