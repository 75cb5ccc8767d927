"""Each plugin's counts: ``stats()`` snapshots and the OpenTelemetry counters, read through the SDK's
``InMemoryMetricReader``.

OpenTelemetry counters are cumulative per (plugin, agent) for the whole process, so the OpenTelemetry checks compare
a reading before and after the calls under test (other tests in the session count too).
"""

from __future__ import annotations

import uuid
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.store.memory import InMemoryStore
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

import promptcache._metrics as pm
from promptcache import InMemoryServerCache, ResponseCache
from promptcache._metrics import PluginMetrics, PluginStats
from promptcache.cache_points import get_model_info
from promptcache.integrations.bedrock import BedrockCachePoints, CachePointChatBedrockConverse
from promptcache.integrations.langgraph import MemoryNode
from promptcache.intention import IntentionCache, IntentionMemory
from promptcache.memory import TypedMemoryStore
from promptcache.testing import ScriptedChatModel

CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"  # $3 input, $15 output, $3.75 write (5 m), $0.30 read per 1M


@pytest.fixture(scope="module")
def reader():
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    pm.set_meter_provider(provider)
    yield reader
    pm.set_meter_provider(None)
    provider.shutdown()


def otel(reader: InMemoryMetricReader) -> dict[tuple[str, tuple], float]:
    """Every promptcache data point now: (instrument name, sorted attributes) -> value."""
    points: dict[tuple[str, tuple], float] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            if scope.scope.name != "promptcache":
                continue
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    points[(metric.name, tuple(sorted(point.attributes.items())))] = point.value
    return points


def delta(before: dict, after: dict, plugin: str, agent: str | None) -> dict[str, float]:
    attrs = tuple(sorted({"plugin": plugin, **({} if agent is None else {"agent": agent})}.items()))
    prefix = f"promptcache.{plugin}."
    out = {}
    for (name, a), value in after.items():
        if a == attrs and name.startswith(prefix):
            change = value - before.get((name, a), 0)
            if change:
                out[name[len(prefix) :]] = round(change, 9)
    return out


def priced_reply(text: str) -> AIMessage:
    return AIMessage(text, usage_metadata={"input_tokens": 1000, "output_tokens": 100, "total_tokens": 1100})


def test_response_cache_counts_hits_misses_writes_and_what_hits_saved(reader):
    agent_id = f"rc-{uuid.uuid4().hex[:8]}"
    model = ScriptedChatModel(replies=[priced_reply("Paris.")], model_name=CLAUDE)
    cache = ResponseCache(InMemoryServerCache(), agent_id=agent_id)
    agent = create_agent(model, tools=[], system_prompt="s", middleware=[cache])
    before = otel(reader)
    for _ in range(3):
        assert agent.invoke({"messages": [HumanMessage("Capital of France?")]})["messages"][-1].content == "Paris."
    # Each hit saves the recorded call: 1000 input x $3 + 100 output x $15 per 1M tokens = $0.0045.
    expected = {"hits": 2, "misses": 1, "writes": 1, "input_tokens_saved": 2000, "output_tokens_saved": 200}
    stats = cache.stats()
    assert stats == PluginStats("response_cache", agent_id, **expected, dollars_saved=pytest.approx(0.009))
    assert stats.hit_rate == pytest.approx(2 / 3)
    assert delta(before, otel(reader), "response_cache", agent_id) == {**expected, "dollars_saved": 0.009}
    assert cache.stats(reset=True).hits == 2
    assert cache.stats() == PluginStats("response_cache", agent_id)
    assert delta(before, otel(reader), "response_cache", agent_id)["hits"] == 2  # OpenTelemetry is cumulative


async def test_response_cache_unknown_model_counts_tokens_not_dollars_and_errors(reader):
    class Failing(InMemoryServerCache):
        def get(self, key: str) -> bytes | None:
            raise OSError("backend down")

        async def aget(self, key: str) -> bytes | None:
            raise OSError("backend down")

    cache = ResponseCache(InMemoryServerCache(), agent_id=f"rc-{uuid.uuid4().hex[:8]}")
    agent = create_agent(ScriptedChatModel(replies=[priced_reply("ok")]), tools=[], middleware=[cache])
    for _ in range(2):
        await agent.ainvoke({"messages": [HumanMessage("hi")]})
    assert cache.stats().as_dict() == {
        "plugin": "response_cache",
        "agent": cache.agent_id,
        "hits": 1,
        "misses": 1,
        "writes": 1,
        "errors": 0,
        "input_tokens_saved": 1000,
        "output_tokens_saved": 100,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "dollars_saved": 0.0,  # "scripted" is not in the price table
    }
    failing = ResponseCache(Failing(), agent_id=f"rc-{uuid.uuid4().hex[:8]}")
    agent = create_agent(ScriptedChatModel(replies=["a", "b"]), tools=[], middleware=[failing])
    agent.invoke({"messages": [HumanMessage("hi")]})
    await agent.ainvoke({"messages": [HumanMessage("hi")]})
    assert (failing.stats().errors, failing.stats().misses, failing.stats().writes) == (2, 2, 2)


def converse_reply(read: int, write: int) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
        "stopReason": "end_turn",
        "usage": {
            "inputTokens": 10,
            "outputTokens": 2,
            "totalTokens": 12 + read + write,
            "cacheReadInputTokens": read,
            "cacheWriteInputTokens": write,
        },
        "metrics": {"latencyMs": 1},
    }


def bedrock_client() -> tuple[Any, Stubber]:
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    return client, Stubber(client)


async def test_bedrock_cache_points_count_cache_reads_writes_and_dollars(reader):
    client, stub = bedrock_client()
    model = CachePointChatBedrockConverse(
        model=CLAUDE, client=client, region_name="us-east-1", cache_model_info=get_model_info(CLAUDE)
    )
    before = otel(reader)
    stub.add_response("converse", converse_reply(read=0, write=500))
    stub.add_response("converse", converse_reply(read=900, write=100))
    with stub:
        model.invoke([HumanMessage("hello")])
        await model.ainvoke([HumanMessage("hello")])
    # dollars: reads save (3 - 0.30) per 1M; writes cost (3.75 - 3) per 1M more: (900*2.7 - 600*0.75) / 1e6
    expected = {"hits": 1, "misses": 1, "writes": 2, "input_tokens_saved": 900, "cache_read_tokens": 900}
    expected["cache_write_tokens"] = 600
    assert model.stats() == PluginStats("cache_points", None, **expected, dollars_saved=pytest.approx(0.00198))
    assert delta(before, otel(reader), "cache_points", None) == {**expected, "dollars_saved": 0.00198}


class _EventStream(dict):
    """botocore's Stubber validates a stream response as one structure; the real client iterates events."""

    armed = False

    def __init__(self, events: list[dict[str, Any]]) -> None:
        super().__init__(events[0])
        self.events = events

    def __iter__(self):
        return iter(self.events) if self.armed else super().__iter__()

    def close(self) -> None:
        pass


def stream_reply(read: int, write: int) -> _EventStream:
    usage = {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12 + read + write}
    usage.update(cacheReadInputTokens=read, cacheWriteInputTokens=write)
    return _EventStream(
        [
            {"messageStart": {"role": "assistant"}},
            {"contentBlockDelta": {"delta": {"text": "ok"}, "contentBlockIndex": 0}},
            {"contentBlockStop": {"contentBlockIndex": 0}},
            {"messageStop": {"stopReason": "end_turn"}},
            {"metadata": {"usage": usage, "metrics": {"latencyMs": 1}}},
        ]
    )


async def test_bedrock_processor_adds_up_its_models_including_streams():
    from langchain_aws import ChatBedrockConverse

    client, stub = bedrock_client()
    processor = BedrockCachePoints()
    twin = processor.wrap(ChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1"))
    stub.add_response("converse", converse_reply(read=300, write=0))
    events = [stream_reply(read=200, write=0), stream_reply(read=0, write=70)]
    for e in events:
        stub.add_response("converse_stream", {"stream": e})
        e.armed = True
    with stub:
        twin.invoke([HumanMessage("hello")])
        assert "".join(c.text for c in twin.stream([HumanMessage("hello")])) == "ok"
        assert "".join([c.text async for c in twin.astream([HumanMessage("hello")])]) == "ok"
    stats = processor.stats()
    # one count per call, streamed or not (the usage arrives in the stream's last event)
    assert (stats.hits, stats.misses, stats.writes) == (2, 1, 1)
    assert (stats.cache_read_tokens, stats.cache_write_tokens) == (500, 70)
    assert twin.stats() == stats  # the twin counts into its processor


def test_intention_cache_and_memory_count_served_repeats_and_stores(reader):
    ran: list[str] = []

    @tool
    def get_reservation_details(reservation_id: str) -> str:
        """Details of a reservation."""
        ran.append(reservation_id)
        return f'{{"id":"{reservation_id}"}}'

    def call(cid: str, rid: str) -> AIMessage:
        return AIMessage(
            "", tool_calls=[{"name": "get_reservation_details", "args": {"reservation_id": rid}, "id": cid}]
        )

    memory = IntentionMemory(ttl_s=600)
    middleware = IntentionCache(memory, serve_repeats=True)
    model = ScriptedChatModel(replies=[call("c1", "JG7"), call("c2", "JG7"), call("c3", "LQ9"), "Done."])
    agent = create_agent(model, tools=[get_reservation_details], middleware=[middleware])
    state = agent.invoke(
        {"messages": [HumanMessage("What are my reservations?")]}, config={"configurable": {"user_id": "u1"}}
    )
    served = [m.tool_call_id for m in state["messages"] if isinstance(m, ToolMessage) and m.response_metadata]
    assert (served, ran) == (["c2"], ["JG7", "LQ9"])
    assert middleware.stats() == PluginStats("intention_cache", None, hits=1, misses=2, writes=2)
    assert memory.stats() == PluginStats("intention_memory", None, hits=1, misses=2, writes=2)


def test_memory_node_counts_store_reads_and_turns_served_from_state():
    memory = TypedMemoryStore(InMemoryStore())
    memory.put("u1", "feedback", "Never mock the database in tests.")
    node = MemoryNode(memory)
    config = {"configurable": {"user_id": "u1"}}
    state: dict[str, Any] = {"messages": [HumanMessage("What is a mutex?")]}
    state.update(node.invoke(state, config))  # first turn of the thread: read from the store
    state["messages"].append(HumanMessage("And a semaphore?"))
    state.update(node.invoke(state, config))  # kept in the state: no store read
    assert "Never mock the database" in state["memory_prompt"]
    assert node.stats() == PluginStats("typed_memory", "MemoryNode", hits=1, misses=1)


def test_redis_cache_counts_the_failures_it_absorbs():
    from promptcache.integrations.redis import RedisCache

    cache = RedisCache(url="redis://127.0.0.1:1/0", breaker_s=0)  # nothing listens on port 1
    assert cache.get("k") is None
    cache.set("k", b"v")
    assert cache.stats().errors == 2 == cache.failures


def test_plugin_metrics_input_checks_and_no_otel(monkeypatch):
    with pytest.raises(ValueError, match="plugin must be lowercase words joined by '_', got 'Response-Cache'"):
        PluginMetrics("Response-Cache")
    with pytest.raises(TypeError, match="agent must be a str or None, got int: 3"):
        PluginMetrics("response_cache", 3)
    with pytest.raises(TypeError, match="provider must be an OpenTelemetry MeterProvider, got dict"):
        pm.set_meter_provider({})
    monkeypatch.setattr(pm, "_otel", None)
    assert pm.otel_available() is False
    with pytest.raises(RuntimeError, match="needs opentelemetry-api"):
        pm.set_meter_provider(None)
    counts = PluginMetrics("response_cache", "no-otel")  # counting works without OpenTelemetry
    counts.lookup([])
    counts.lookup(["match"])
    counts.saved(input_tokens=5, dollars=None)
    assert counts.snapshot() == PluginStats("response_cache", "no-otel", hits=1, misses=1, input_tokens_saved=5)
