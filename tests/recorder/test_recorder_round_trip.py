"""A real ``create_agent`` recorded for 20 turns (40 model calls) with Bedrock cache points and ResponseCache on, replayed.

The Bedrock stand-in is a real boto3 ``bedrock-runtime`` client with botocore's Stubber; each reply is added just
before the call is made (a ``provide-client-params`` handler registered before the recorder's) and carries the
usage Bedrock's prompt cache would bill for the request as sent: the replay's own token estimate of each block and
the simulator's cache rules applied to the ``cachePoint`` blocks the plugins placed. Replayed, the recording's
``as-logged`` row must then reproduce that bill exactly (0.0% difference), with and without the message texts.
"""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from langchain.agents import create_agent
from langchain_aws import ChatBedrockConverse
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from promptcache import ResponseCache, TrafficRecorder
from promptcache._pricing import price_for
from promptcache.backends import InMemoryServerCache
from promptcache.integrations.bedrock import BedrockCachePoints
from promptcache.replay._as_logged import AsLoggedStrategy
from promptcache.replay._bedrock_bodies import _converse
from promptcache.replay._engine import run_replay
from promptcache.replay._models import cache_rules
from promptcache.replay._prepare import prepare, requests_of
from promptcache.replay._simulator import PromptCacheSimulator
from promptcache.replay._tokens import CLAUDE, TokenCounter
from promptcache.replay._transcript import Conversation, Message
from tests.support.bedrock import CLAUDE as MODEL
from tests.support.bedrock import client_and_stub, words

SYSTEM = "You are a careful travel assistant. " + words("policy", 1600)
TURNS = 20
CALLS = 2 * TURNS  # each turn: a tool call, then the answer


@tool
def get_weather(city: str) -> str:
    """Current weather of a city: temperature in degrees Celsius and a short sky description."""
    return f"{city}: 18 C, " + words("cloudy", 120)


class SimulatedBedrock:
    """Usage for each Converse request as Bedrock's cache would bill it (module docstring)."""

    def __init__(self, stub: Any) -> None:
        self.stub = stub
        self.counter = TokenCounter(CLAUDE)
        self.rules = cache_rules(MODEL)
        self.sim = PromptCacheSimulator(self.rules, price_for(MODEL))
        self.usages: list[dict[str, int]] = []

    def __call__(self, params: dict[str, Any], **_: Any) -> None:
        system, tools, messages, points, _, _ = _converse(params, {"output": {"message": {"content": []}}})
        conv = Conversation(
            "c", "c", system, [*messages, Message("assistant", ())], tools=tools, replies=[len(messages)]
        )
        prepared = prepare(conv, self.counter)
        request = requests_of(prepared, self.counter)[0]
        checkpoints = AsLoggedStrategy(self.rules)._listed(request, points)
        cost = self.sim.simulate(prepared.cum, prepared.hashes, request.n_blocks, checkpoints, time.time())
        last = params["messages"][-1]["content"]
        if any("toolResult" in block for block in last):
            content = [{"text": "It is mild in that city today. " + words("detail", 40)}]
            stop = "end_turn"
        else:
            city = f"City{len(self.usages)}"
            content = [
                {"toolUse": {"toolUseId": f"tu{len(self.usages)}", "name": "get_weather", "input": {"city": city}}}
            ]
            stop = "tool_use"
        usage = {
            "inputTokens": cost.input_tokens,
            "cacheReadInputTokens": cost.read_tokens,
            "cacheWriteInputTokens": cost.write_tokens,
            "outputTokens": 25,
            "totalTokens": cost.input_tokens + cost.read_tokens + cost.write_tokens + 25,
        }
        self.usages.append(usage)
        reply = {"output": {"message": {"role": "assistant", "content": content}}, "stopReason": stop}
        self.stub.add_response("converse", {**reply, "usage": usage, "metrics": {"latencyMs": 5}})


def _record(target: Any, drop_text: bool = False, caching: bool = True) -> SimulatedBedrock:
    client, stub = client_and_stub()
    bedrock = SimulatedBedrock(stub)
    client.meta.events.register("provide-client-params.bedrock-runtime.Converse", bedrock)  # before the recorder's
    stub.activate()
    model = ChatBedrockConverse(model=MODEL, client=client, region_name="us-east-1")
    middleware: list[Any] = [ResponseCache(InMemoryServerCache())]
    if caching:
        middleware.append(BedrockCachePoints())
    middleware.append(TrafficRecorder(target, drop_text=drop_text))
    agent = create_agent(
        model, tools=[get_weather], system_prompt=SYSTEM, middleware=middleware, checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "trip-1", "user_id": "ada"}}
    for turn in range(TURNS):
        agent.invoke({"messages": [HumanMessage(f"What is the weather in place {turn}?")]}, config)
    # the same first question in a new thread: ResponseCache answers it, so the model is not called
    agent.invoke(
        {"messages": [HumanMessage("What is the weather in place 0?")]},
        {"configurable": {"thread_id": "x", "user_id": "ada"}},
    )
    stub.assert_no_pending_responses()
    return bedrock


def _billed(bedrock: SimulatedBedrock) -> tuple[int, int, int]:
    u = bedrock.usages
    return (
        sum(x["inputTokens"] for x in u),
        sum(x["cacheReadInputTokens"] for x in u),
        sum(x["cacheWriteInputTokens"] for x in u),
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SimulatedBedrock]:
    path = tmp_path_factory.mktemp("rec") / "calls.jsonl"
    return path, _record(path)


def test_one_line_per_model_call_with_the_sent_cache_points(recorded: tuple[Path, SimulatedBedrock]) -> None:
    path, bedrock = recorded
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    # the repeated question in a new thread was answered by ResponseCache: one line per model call
    assert len(lines) == CALLS == len(bedrock.usages)
    first = lines[0]
    assert (first["thread_id"], first["user"], first["model"]) == ("trip-1", "ada", MODEL)
    assert first["sent"]["operation"] == "Converse"
    assert any("cachePoint" in block for block in first["sent"]["body"]["system"])
    assert first["request"]["messages"][0]["type"] == "system"
    details = first["response"]["usage_metadata"]["input_token_details"]
    assert details == {"cache_read": 0, "cache_creation": bedrock.usages[0]["cacheWriteInputTokens"]}
    assert lines[5]["response"]["usage_metadata"]["input_token_details"]["cache_read"] > 0
    assert first["started"] <= first["ended"]


def test_replay_of_a_recording_with_caching_on_matches_the_recorded_bill(
    recorded: tuple[Path, SimulatedBedrock],
) -> None:
    path, bedrock = recorded
    result = run_replay([path], MODEL)
    assert result.requests == CALLS and result.conversations == 1
    assert result.logged is not None and result.fidelity is not None
    assert (result.logged.input_tokens, result.logged.read_tokens, result.logged.write_tokens) == _billed(bedrock)
    as_logged = result.strategies["as-logged"]
    assert (as_logged.input_tokens, as_logged.read_tokens, as_logged.write_tokens) == _billed(bedrock)
    assert result.fidelity.read_within == result.fidelity.write_within == CALLS
    assert round(result.fidelity.cost_difference or 0.0, 6) == 0.0


def test_a_recording_without_text_still_replays_to_the_recorded_bill(tmp_path: Path) -> None:
    stream = io.StringIO()
    bedrock = _record(stream, drop_text=True)
    text = stream.getvalue()
    assert "place 3" not in text and "policy" not in text  # no message text is kept
    lines = [orjson.loads(x) for x in text.splitlines()]
    assert lines[0]["text"] == "dropped"
    assert lines[0]["request"]["messages"][1]["data"]["content"]["promptcache_redacted"]["chars"] == len(
        "What is the weather in place 0?"
    )
    path = tmp_path / "dropped.jsonl"
    path.write_text(text)
    result = run_replay([path], MODEL)
    assert result.requests == CALLS and result.logged is not None and result.fidelity is not None
    assert (result.logged.input_tokens, result.logged.read_tokens, result.logged.write_tokens) == _billed(bedrock)
    as_logged = result.strategies["as-logged"]  # the stand-in texts keep every cache point where it was
    assert (as_logged.input_tokens, as_logged.read_tokens, as_logged.write_tokens) == _billed(bedrock)
    assert round(result.fidelity.cost_difference or 0.0, 6) == 0.0


def test_a_recording_with_caching_off_shows_the_saving_of_turning_it_on(tmp_path: Path) -> None:
    path = tmp_path / "off.jsonl"
    bedrock = _record(path, caching=False)
    assert _billed(bedrock)[1:] == (0, 0)  # nothing cached: no cache points were sent
    result = run_replay([path], MODEL)
    assert result.strategies["as-logged"].read_tokens == 0
    assert result.fidelity is not None and round(result.fidelity.cost_difference or 0.0, 6) == 0.0
    ours = result.relative("anchored-tail")
    assert ours is not None and ours < 0.5  # caching on would bill less than half the uncached input


def test_an_async_agent_call_records_the_sent_body_too(tmp_path: Path) -> None:
    client, stub = client_and_stub()
    bedrock = SimulatedBedrock(stub)
    client.meta.events.register("provide-client-params.bedrock-runtime.Converse", bedrock)
    stub.activate()
    model = ChatBedrockConverse(model=MODEL, client=client, region_name="us-east-1")
    path = tmp_path / "async.jsonl"
    agent = create_agent(model, tools=[get_weather], system_prompt=SYSTEM,
                         middleware=[BedrockCachePoints(), TrafficRecorder(path)])  # fmt: skip
    asyncio.run(agent.ainvoke({"messages": [HumanMessage("What is the weather in place 0?")]}))
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    assert len(lines) == 2 and all(line["sent"]["operation"] == "Converse" for line in lines)
    assert lines[1]["sent"]["body"]["messages"][-1]["content"][0]["toolResult"]["toolUseId"] == "tu0"
