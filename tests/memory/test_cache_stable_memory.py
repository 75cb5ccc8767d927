"""Typed memory and Bedrock cache points in one ``create_agent``: the memory block never breaks the cached prefix.

Checked on the requests a real boto3 ``bedrock-runtime`` client sent to botocore's ``Stubber``: every request's
cached prefix (everything before its last cache point) is a byte prefix of the next request, except right after a
memory changed.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import boto3
from botocore.stub import Stubber
from langchain.agents import create_agent
from langchain_aws import ChatBedrockConverse
from langgraph.checkpoint.memory import MemorySaver
from langgraph.store.memory import InMemoryStore

from promptcache.cache_points import get_model_info
from promptcache.integrations.bedrock import BedrockCachePoints
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore

CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"
SYSTEM = "You are the payments team's coding assistant. " * 20

# 20 turns, work and general knowledge mixed; the first names the user's code
TURNS = [
    "what does retry.py do on a 429?",
    "is 97 prime?",
    "explain batch_commit() in ledger-worker",
    "when did WWII end?",
    "fix it",
    "What is the difference between a process and a thread?",
    "why is InvoiceSerializer so slow?",
    "How does compound interest work?",
    "Is the deploy of payments-api still running?",
    "what is the capital of Australia?",
    "rerun the failing test in tests/test_ledger.py",
    "Who wrote Pride and Prejudice?",
    "What's blocking release 2.3?",
    "How many bones are in the human body?",
    "add a unit test for parse_amount",
    "Explain big-O notation.",
    "does the webhook handler log the request id?",
    "Why is the sky blue?",
    "ship it",
    "What is a monad?",
]


def reply(text: str) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        "metrics": {"latencyMs": 1},
    }


def _agent(memory: TypedMemoryStore) -> tuple[Any, Stubber, list[dict[str, Any]]]:
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    sent: list[dict[str, Any]] = []
    client.meta.events.register(
        "provide-client-params.bedrock-runtime.Converse", lambda params, **_: sent.append(copy.deepcopy(params))
    )
    stub = Stubber(client)
    model = ChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1")
    points = BedrockCachePoints(cache_model_info=get_model_info(CLAUDE, min_tokens_per_cache_point=64))
    agent = create_agent(
        model,
        tools=[],
        system_prompt=SYSTEM,
        checkpointer=MemorySaver(),
        middleware=[TypedMemoryMiddleware(memory, prompt_caching=points), points],
    )
    return agent, stub, sent


def _items(request: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The request as a flat list: tool specs, system blocks, then (message index, role, block)."""
    items: list[tuple[Any, ...]] = [("tool", t) for t in (request.get("toolConfig") or {}).get("tools", [])]
    items += [("system", b) for b in request["system"]]
    for i, message in enumerate(request["messages"]):
        items += [(i, message["role"], b) for b in message["content"]]
    return items


def _bytes(items: list[tuple[Any, ...]]) -> bytes:
    return b"".join(json.dumps(i, sort_keys=True).encode() + b"\n" for i in items if "cachePoint" not in i[-1])


def cached_prefix(request: dict[str, Any]) -> bytes:
    """The bytes of everything before the request's last cache point (cache points themselves left out)."""
    items = _items(request)
    last = max(i for i, item in enumerate(items) if "cachePoint" in item[-1])
    return _bytes(items[:last])


def _seed(memory: TypedMemoryStore) -> None:
    memory.put("u1", "feedback", "Never mock the database in tests.")
    memory.put("u1", "user_fact", "Dana maintains ledger-worker.")
    memory.put("u1", "project_state", "Release 2.3 is blocked by the PCI sign-off.")


def test_twenty_turns_keep_the_cached_prefix_until_a_memory_changes() -> None:
    memory = TypedMemoryStore(InMemoryStore())
    _seed(memory)
    agent, stub, sent = _agent(memory)
    for i in range(len(TURNS)):
        stub.add_response("converse", reply(f"answer {i}"))
    config = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
    changed_before = 12  # a memory is written between turn 11 and turn 12 (0-based)
    conceptual = []
    with stub:
        for i, question in enumerate(TURNS):
            if i == changed_before:
                memory.put("u1", "project_state", "Release 2.3 shipped on Tuesday.", subject="release 2.3")
            out = agent.invoke({"messages": [("user", question)]}, config)
            conceptual.append(out["memory_turn"]["conceptual"])
    stub.assert_no_pending_responses()
    assert len(sent) == 20
    # general questions were recognised, and still did not change the block (caching on: per conversation)
    assert sum(conceptual) >= 8
    broken = [i for i in range(19) if not _bytes(_items(sent[i + 1])).startswith(cached_prefix(sent[i]))]
    assert broken == [changed_before - 1]
    for request in sent:
        system = request["system"]
        # the agent's system prompt, the anchor point, then the memory block
        assert system[0] == {"text": SYSTEM} and "cachePoint" in system[1]
        assert system[2]["text"].startswith("Rules:\nNever mock the database in tests.")
        assert "Current state:" in system[2]["text"]
        assert "cachePoint" in request["messages"][-1]["content"][-1]  # the tail point covers the newest turn


def test_without_caching_general_turns_leave_project_state_out() -> None:
    memory = TypedMemoryStore(InMemoryStore())
    _seed(memory)
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    sent: list[dict[str, Any]] = []
    client.meta.events.register(
        "provide-client-params.bedrock-runtime.Converse", lambda params, **_: sent.append(copy.deepcopy(params))
    )
    stub = Stubber(client)
    model = ChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1")
    agent = create_agent(
        model,
        tools=[],
        system_prompt=SYSTEM,
        checkpointer=MemorySaver(),
        middleware=[TypedMemoryMiddleware(memory, prompt_caching=False)],
    )
    config = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
    with stub:
        for i, question in enumerate(["what does retry.py do on a 429?", "is 97 prime?"]):
            stub.add_response("converse", reply(f"answer {i}"))
            agent.invoke({"messages": [("user", question)]}, config)
    assert ["Current state:" in r["system"][-1]["text"] for r in sent] == [True, False]
    assert all(not any("cachePoint" in b for b in r["system"]) for r in sent)  # no caching: no point added


def test_a_conversation_that_starts_general_loads_project_state_once() -> None:
    memory = TypedMemoryStore(InMemoryStore())
    _seed(memory)
    agent, stub, sent = _agent(memory)
    questions = ["is 97 prime?", "when did WWII end?", "what does retry.py do on a 429?", "Why is the sky blue?"]
    config = {"configurable": {"thread_id": "t2", "user_id": "u1"}}
    with stub:
        for i, question in enumerate(questions):
            stub.add_response("converse", reply(f"answer {i}"))
            agent.invoke({"messages": [("user", question)]}, config)
    held = ["Current state:" in r["system"][-1]["text"] for r in sent]
    assert held == [False, False, True, True]  # skipped while free, loaded for the work turn, then kept
