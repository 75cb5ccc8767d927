"""Where the memory block goes, by the type of the agent's system prompt and whether a cache point is needed.

A string system prompt stays a string when no cache point goes between it and the memory block (caching off, or a
model the wrapper adds no point for); with caching on a Bedrock Converse model the block is its own system block
after the system prompt and a cache point.
"""

from __future__ import annotations

import copy
from typing import Any

import boto3
from botocore.stub import Stubber
from langchain.agents import create_agent
from langchain_aws import ChatBedrockConverse
from langchain_core.messages import SystemMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.store.memory import InMemoryStore

from promptcache.integrations.bedrock import BedrockCachePoints
from promptcache.integrations.langgraph import with_memory_prompt
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore
from promptcache.memory._render import MEMORY_CACHE_POINT, holds_memory_prompt
from promptcache.testing import ScriptedChatModel

CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"
SYSTEM = "You are the payments team's coding assistant. " * 30
BLOCK = "Rules:\nNever mock the database in tests."


def test_a_string_system_prompt_stays_a_string_without_a_cache_point() -> None:
    out = with_memory_prompt(SystemMessage("Be brief.", additional_kwargs={"k": 1}), BLOCK)
    assert out is not None
    assert out.content == "Be brief.\n\n" + BLOCK
    assert out.additional_kwargs == {"k": 1}
    assert holds_memory_prompt(out, BLOCK)
    assert not holds_memory_prompt(SystemMessage("Be brief."), BLOCK)
    empty = with_memory_prompt(SystemMessage(""), BLOCK)
    assert empty is not None and empty.content == BLOCK


def test_a_cache_point_makes_blocks_and_a_list_stays_a_list() -> None:
    pointed = with_memory_prompt(SystemMessage("Be brief."), BLOCK, cache_point=MEMORY_CACHE_POINT)
    assert pointed is not None
    assert pointed.content == [
        {"type": "text", "text": "Be brief."},
        {"cachePoint": {"type": "default"}},
        {"type": "text", "text": BLOCK},
    ]
    assert holds_memory_prompt(pointed, BLOCK)
    listed = with_memory_prompt(SystemMessage([{"type": "text", "text": "Be brief."}]), BLOCK)
    assert listed is not None
    assert listed.content == [{"type": "text", "text": "Be brief."}, {"type": "text", "text": BLOCK}]
    alone = with_memory_prompt(None, BLOCK)
    assert alone is not None and alone.content == BLOCK
    system = SystemMessage("Be brief.")
    assert with_memory_prompt(system, "") is system


def _seeded() -> TypedMemoryStore:
    memory = TypedMemoryStore(InMemoryStore())
    memory.put("u1", "feedback", "Never mock the database in tests.")
    return memory


def test_create_agent_with_a_string_system_prompt_keeps_it_a_string() -> None:
    model = ScriptedChatModel(replies=["ok"], cycle=True)
    # caching on, but the model is not a Bedrock Converse model: no cache point is added, so no blocks are needed
    for caching in (False, True):
        agent = create_agent(
            model,
            tools=[],
            system_prompt="You are helpful.",
            checkpointer=MemorySaver(),
            middleware=[TypedMemoryMiddleware(_seeded(), prompt_caching=caching)],
        )
        agent.invoke(
            {"messages": [("user", "what does retry.py do on a 429?")]},
            {"configurable": {"thread_id": "t", "user_id": "u1"}},
        )
        system = model.seen[-1][0]
        assert system.type == "system"
        assert system.content == "You are helpful.\n\n" + BLOCK


def _bedrock(caching: bool) -> list[dict[str, Any]]:
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    sent: list[dict[str, Any]] = []
    client.meta.events.register(
        "provide-client-params.bedrock-runtime.Converse", lambda params, **_: sent.append(copy.deepcopy(params))
    )
    stub = Stubber(client)
    stub.add_response(
        "converse",
        {
            "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
            "metrics": {"latencyMs": 1},
        },
    )
    model = ChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1")
    middleware: list[Any] = [TypedMemoryMiddleware(_seeded(), prompt_caching=caching)]
    if caching:
        middleware.append(BedrockCachePoints())
    agent = create_agent(model, tools=[], system_prompt=SYSTEM, checkpointer=MemorySaver(), middleware=middleware)
    with stub:
        agent.invoke(
            {"messages": [("user", "what does retry.py do on a 429?")]},
            {"configurable": {"thread_id": "t", "user_id": "u1"}},
        )
    stub.assert_no_pending_responses()
    return sent


def test_bedrock_without_caching_sends_one_system_text() -> None:
    (request,) = _bedrock(caching=False)
    assert request["system"] == [{"text": SYSTEM + "\n\n" + BLOCK}]


def test_bedrock_with_caching_puts_a_cache_point_before_the_memory_block() -> None:
    (request,) = _bedrock(caching=True)
    assert request["system"][0] == {"text": SYSTEM}
    assert "cachePoint" in request["system"][1]
    assert request["system"][2] == {"text": BLOCK}
