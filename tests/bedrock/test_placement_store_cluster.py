"""The Bedrock cache-point placement store on a real 3-master Redis Cluster (RedisCache with cluster clients),
through a real boto3 ``bedrock-runtime`` client and botocore's Stubber, sync and async."""

from __future__ import annotations

import boto3
from botocore.stub import Stubber
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from promptcache.backends import InMemoryServerCache
from promptcache.cache_points import CachePointPlacement, get_model_info
from promptcache.integrations.bedrock import CachePointChatBedrockConverse, PlacementStore

CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"
CLAUDE_BASE = "anthropic.claude-sonnet-4-20250514-v1:0"
SYSTEM = " ".join(["sys"] * 30)


def one_word_per_token(message) -> int:
    content = message["content"]
    if isinstance(content, str):
        return len(content.split())
    return sum(len(b["text"].split()) for b in content if "text" in b)


def model(client, store) -> CachePointChatBedrockConverse:
    return CachePointChatBedrockConverse(
        model=CLAUDE,
        client=client,
        region_name="us-east-1",
        cache_model_info=get_model_info(CLAUDE, min_tokens_per_cache_point=20),
        token_counter=one_word_per_token,
        placement_store=store,
    )


def reply(text: str) -> dict:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12},
        "metrics": {"latencyMs": 1},
    }


def test_placements_of_many_conversations_spread_over_masters(redis_cluster, redis_cluster_cache):
    store = PlacementStore(redis_cluster_cache)
    ports = set()
    for i in range(30):
        conv = f"thread:t{i}"
        placements = [CachePointPlacement(index=i % 5, fingerprint=f"fp{i}")]
        store.save(conv, CLAUDE, placements)
        assert store.load(conv, CLAUDE) == placements
        full = store.cache.full_key(store.key(conv, CLAUDE))
        assert full == f"{redis_cluster_cache.prefix}placements:{store.key(conv, CLAUDE)}"
        ports.add(redis_cluster.port_of_key(full))
    assert ports == set(redis_cluster.ports)
    # The cache's clear() (every master) removes its own entries only, never the placements' namespace.
    redis_cluster_cache.set("entry", b"v")
    assert redis_cluster_cache.clear() == 1
    assert [store.load(f"thread:t{i}", CLAUDE)[0].fingerprint for i in (0, 29)] == ["fp0", "fp29"]
    assert store.cache.clear() == 30
    assert store.load("thread:t0", CLAUDE) == []
    assert store.cache.failures == 0 and redis_cluster_cache.stats().errors == 0


async def test_async_calls_share_placements_across_workers(redis_cluster_cache):
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stub = Stubber(client)
    config = {"configurable": {"thread_id": "cluster-thread"}}
    first, second = model(client, redis_cluster_cache), model(client, redis_cluster_cache)
    messages = [SystemMessage(SYSTEM), HumanMessage(" ".join(["u0"] * 30))]
    stub.add_response("converse", reply("a1"))
    with stub:
        await first.ainvoke(messages, config=config)
    placed = first.last_plan.placements
    assert [p.index for p in placed] == [0]
    store = PlacementStore(redis_cluster_cache)
    assert store.load("thread:cluster-thread", CLAUDE_BASE) == placed
    # The other worker continues the thread from the placements in the cluster: it places exactly what a worker
    # holding those placements in its own store places.
    turn2 = [*messages, AIMessage("a1"), HumanMessage(" ".join(["u2"] * 30))]
    seeded = InMemoryServerCache()
    PlacementStore(seeded).save("thread:cluster-thread", CLAUDE_BASE, placed)
    reference = model(client, seeded)
    for worker in (second, reference):
        stub.add_response("converse", reply("a3"))
        with stub:
            await worker.ainvoke(turn2, config=config)
    got, want = second.last_plan.placements, reference.last_plan.placements
    assert [(p.index, p.fingerprint) for p in got] == [(p.index, p.fingerprint) for p in want]
    assert store.load("thread:cluster-thread", CLAUDE_BASE) == got
    stub.assert_no_pending_responses()
    assert redis_cluster_cache.stats().errors == 0  # counted by every namespaced view of the cache (placements')
