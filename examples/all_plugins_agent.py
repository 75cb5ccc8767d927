"""All four plugins in one agent: typed memory, ResponseCache, Bedrock cache points and the intention cache.

Offline: a real boto3 ``bedrock-runtime`` client with botocore's Stubber (no AWS keys, no network) answers a
conversation that mixes work and general questions; a repeated question comes back from the ResponseCache without
a model call. The example prints, per request the client sent, where the cache points are and whether the memory
block changed, then prices every request with the replay simulator (``promptcache.replay``).
``python bench/all_plugins.py`` runs the same agent over recorded conversations (tau-bench, BFCL) and compares it
with each plugin alone and with none.

    pip install -e ".[bedrock,replay]"   # boto3 + langchain-aws for the Stubber client, the simulator's extras
    python examples/all_plugins_agent.py
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import boto3
from botocore.stub import Stubber
from langchain.agents import create_agent
from langchain_aws import ChatBedrockConverse
from langchain_core.tools import tool
from langgraph.checkpoint.memory import MemorySaver
from langgraph.store.memory import InMemoryStore

from promptcache import InMemoryServerCache, IntentionCache, IntentionMemory, ResponseCache
from promptcache.integrations.bedrock import BedrockCachePoints
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore
from promptcache.replay import PromptCacheSimulator, price_for
from promptcache.replay._models import cache_rules
from promptcache.replay._simulator import Checkpoint

MODEL = "us.anthropic.claude-sonnet-4-20250514-v1:0"
SYSTEM = "You are the payments team's coding assistant. Answer precisely and cite file names. " * 80
TURNS = [
    ("dana-1", "is 97 prime?"),  # general first: project state is left out while that costs no cache writes
    ("dana-1", "what does retry.py do on a 429?"),  # names code: work, project state loads (once)
    ("dana-1", "when did WWII end?"),  # general, but the block keeps project state: the cached prefix stays
    ("dana-1", "fix it"),  # a pronoun command after a tangent: back to the work turn
    ("dana-1", "what's blocking release 2.3?"),
    ("dana-2", "is 97 prime?"),  # a new conversation asking what dana-1 began with: the ResponseCache answers
]


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    return f"{path}: def retry(response): ... sleeps 2 ** attempt seconds on 429"


def _client() -> tuple[Any, list[dict[str, Any]]]:
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stub = Stubber(client)
    sent: list[dict[str, Any]] = []

    def answer(params: dict[str, Any], **_: Any) -> None:
        sent.append(copy.deepcopy(params))
        content: list[dict[str, Any]] = [{"text": f"answer {len(sent)}"}]
        stop = "end_turn"
        if len(sent) == 2:  # the question about retry.py reads the file first
            content = [{"toolUse": {"toolUseId": "t1", "name": "read_file", "input": {"path": "retry.py"}}}]
            stop = "tool_use"
        usage = {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}
        reply = {"role": "assistant", "content": content}
        stub.add_response(
            "converse", {"output": {"message": reply}, "stopReason": stop, "usage": usage, "metrics": {"latencyMs": 1}}
        )

    client.meta.events.register("provide-client-params.bedrock-runtime.Converse", answer)
    stub.activate()
    return client, sent


def price(requests: list[dict[str, Any]]) -> tuple[float, float]:
    """Input-side cost (USD) and cache-read share of ``requests``, 10 s apart, with the replay simulator (tokens
    estimated as characters / 4 here; the benchmark counts them with tiktoken)."""
    priced_as = "anthropic.claude-sonnet-4-20250514-v1:0"
    sim = PromptCacheSimulator(cache_rules(priced_as), price_for(priced_as))
    cost = read = total = 0.0
    for i, request in enumerate(requests):
        items = [("system", b) for b in request["system"]]
        items += [("messages", b) for m in request["messages"] for b in m["content"]]
        blocks, points = [], []
        for where, block in items:
            if "cachePoint" in block:
                points.append(Checkpoint(len(blocks), 300.0, where))
            else:
                blocks.append(block)
        cum, hashes, h = [0], [b""], hashlib.sha256()
        for block in blocks:
            cum.append(cum[-1] + len(json.dumps(block)) // 4)
            h.update(json.dumps(block, sort_keys=True).encode())
            hashes.append(h.copy().digest())
        billed = sim.simulate(cum, hashes, len(blocks), [p for p in points if p.boundary], i * 10.0)
        cost += billed.cost_usd
        read += billed.read_tokens
        total += billed.input_tokens + billed.read_tokens + billed.write_tokens
    return cost, read / total


def main() -> None:
    client, sent = _client()
    memory = TypedMemoryStore(InMemoryStore())
    memory.put("dana", "feedback", "Never mock the database in tests.")
    memory.put("dana", "user_fact", "Dana maintains ledger-worker.")
    memory.put("dana", "project_state", "Release 2.3 is blocked by the PCI sign-off.")
    points = BedrockCachePoints()
    agent = create_agent(
        ChatBedrockConverse(model=MODEL, client=client, region_name="us-east-1"),
        tools=[read_file],
        system_prompt=SYSTEM,
        checkpointer=MemorySaver(),
        middleware=[
            ResponseCache(InMemoryServerCache(), ttl_s=600),
            TypedMemoryMiddleware(memory, prompt_caching=points),  # the cache-point processor says caching is on
            IntentionCache(IntentionMemory(), serve_repeats=True),
            points,
        ],
    )
    seen = 0
    for thread, question in TURNS:
        config = {"configurable": {"thread_id": thread, "user_id": "dana"}}
        out = agent.invoke({"messages": [("user", question)]}, config)
        calls = len(sent) - seen
        seen = len(sent)
        print(f"{thread} {question!r}: conceptual={out['memory_turn']['conceptual']}, model calls={calls}")
    blocks = {r["system"][-1]["text"] for r in sent}
    print(f"requests sent: {len(sent)}; distinct memory blocks: {len(blocks)}")
    for i, request in enumerate(sent):
        where = [n for n, b in enumerate(request["system"]) if "cachePoint" in b]
        tail = sum("cachePoint" in b for m in request["messages"] for b in m["content"])
        print(f"  request {i + 1}: system cache point after block {where}, message cache points {tail}")
    cost, share = price(sent)
    print(f"input cost ${cost:.4f}, cache-read share {share:.1%}")


if __name__ == "__main__":
    main()
