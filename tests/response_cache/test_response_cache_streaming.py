"""ResponseCache and streaming: hits visible to stream/astream/stream_mode="messages"; misses stored once complete."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.outputs import ChatGenerationChunk

from promptcache import InMemoryServerCache, ResponseCache, with_processors
from promptcache.testing import ScriptedChatModel

REPLY = AIMessage("Paris is the capital.", tool_calls=[{"name": "lookup", "args": {"city": "Paris"}, "id": "c9"}])
USAGE = {"input_tokens": 3, "output_tokens": 5, "total_tokens": 8}


def count_entries(cache: Any) -> int:
    if isinstance(cache, InMemoryServerCache):
        return len(cache)
    return len(list(cache.client.scan_iter(match=cache.prefix + "*")))


def joined(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    total = chunks[0]
    for c in chunks[1:]:
        total = total + c
    return total


def reply() -> AIMessage:
    return REPLY.model_copy(update={"usage_metadata": dict(USAGE)})


def assert_same_reply(hit: Any, miss: Any) -> None:
    """Same text, tool calls and finish reason; the hit bills zero and keeps the original usage."""
    assert hit.content == miss.content == "Paris is the capital."
    assert [(t["name"], t["args"], t["id"]) for t in hit.tool_calls] == [("lookup", {"city": "Paris"}, "c9")]
    assert [(t["name"], t["args"], t["id"]) for t in miss.tool_calls] == [("lookup", {"city": "Paris"}, "c9")]
    assert hit.response_metadata["finish_reason"] == miss.response_metadata["finish_reason"] == "stop"
    assert miss.usage_metadata == USAGE
    assert hit.response_metadata["promptcache"]["cache"] == "hit"
    assert hit.response_metadata["promptcache"]["usage"] == USAGE
    assert hit.usage_metadata == {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}


def test_with_processors_stream_miss_then_hit(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=[reply()])
    wrapped = with_processors(model, [ResponseCache(server_cache)])
    miss_chunks = list(wrapped.stream("capital of France?"))
    assert [c.content for c in miss_chunks if c.content] == ["Paris ", "is ", "the ", "capital."]  # streamed as usual
    assert count_entries(server_cache) == 1  # stored once complete
    hit_chunks = list(wrapped.stream("capital of France?"))
    assert model.calls == 1
    assert len(hit_chunks) == 1
    assert_same_reply(joined(hit_chunks), joined(miss_chunks))


async def test_with_processors_astream_miss_then_hit(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=[reply()])
    wrapped = with_processors(model, [ResponseCache(server_cache)])
    miss_chunks = [c async for c in wrapped.astream("capital of France?")]
    hit_chunks = [c async for c in wrapped.astream("capital of France?")]
    assert model.calls == 1
    assert_same_reply(joined(hit_chunks), joined(miss_chunks))


def test_with_processors_invoke_hit_matches_stream_miss(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=[reply()])
    wrapped = with_processors(model, [ResponseCache(server_cache)])
    miss = joined(list(wrapped.stream("q")))
    assert_same_reply(wrapped.invoke("q"), miss)


def test_agent_stream_mode_messages_shows_hit(server_cache: Any) -> None:
    """LangGraph emits a message a node returns without streaming it (``on_chain_end``, deduplicated by id); the
    hit's fresh id makes sure it is emitted even when a client resends the earlier reply."""
    model = ScriptedChatModel(replies=[reply()])
    agent = create_agent(model, tools=[], middleware=[ResponseCache(server_cache)])
    inp = {"messages": [HumanMessage("capital of France?")]}
    miss_events = list(agent.stream(inp, stream_mode="messages"))
    hit_events = list(agent.stream(inp, stream_mode="messages"))
    assert model.calls == 1
    miss_chunks = [m for m, meta in miss_events if meta["langgraph_node"] == "model"]
    assert len(miss_chunks) == 5 and all(isinstance(m, AIMessageChunk) for m in miss_chunks)
    hit_messages = [m for m, meta in hit_events if meta["langgraph_node"] == "model"]
    assert len(hit_messages) == 1
    assert_same_reply(hit_messages[0], joined(miss_chunks))


async def test_agent_astream_mode_messages_shows_hit(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=[reply()])
    agent = create_agent(model, tools=[], middleware=[ResponseCache(server_cache)])
    inp = {"messages": [HumanMessage("capital of France?")]}
    miss = [m async for m, meta in agent.astream(inp, stream_mode="messages") if meta["langgraph_node"] == "model"]
    hit = [m async for m, meta in agent.astream(inp, stream_mode="messages") if meta["langgraph_node"] == "model"]
    assert model.calls == 1 and len(hit) == 1
    assert_same_reply(hit[0], joined(miss))


def test_with_processors_stream_stopped_early_writes_nothing(server_cache: Any) -> None:
    model = ScriptedChatModel(replies=["one two three"])
    wrapped = with_processors(model, [ResponseCache(server_cache)])
    stream = wrapped.stream("q")
    assert next(stream).content == "one "
    stream.close()
    assert count_entries(server_cache) == 0


class SlowStream(ScriptedChatModel):
    async def _astream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        for chunk in self._chunks(self._next(messages)):
            await asyncio.sleep(0.02)
            yield ChatGenerationChunk(message=chunk)


async def test_agent_astream_stopped_early_writes_nothing(server_cache: Any) -> None:
    """The consumer leaves after the first token: LangGraph cancels the model node, nothing is stored.

    (In create_agent the model node gathers the whole reply before the response hook, so a partial reply can never
    be stored; a node that does finish has a complete, billed reply.)"""
    agent = create_agent(
        SlowStream(replies=["one two three four five"]), tools=[], middleware=[ResponseCache(server_cache)]
    )
    stream = agent.astream({"messages": [HumanMessage("q")]}, stream_mode="messages")
    async for chunk, _meta in stream:
        assert chunk.content == "one "
        break
    await stream.aclose()
    await asyncio.sleep(0.2)
    assert count_entries(server_cache) == 0
