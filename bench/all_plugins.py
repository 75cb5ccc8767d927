"""Benchmark: one ``create_agent`` with all four plugins, priced on the requests it actually sent.

The agent is a ``ChatBedrockConverse`` (Claude Sonnet 4) on a real boto3 ``bedrock-runtime`` client with botocore's
``Stubber``; its replies are the recorded assistant turns of real multi-turn conversations (tau-bench airline: the
recorded tool calls run as tools that return the recorded results; the BFCL v4 memory conversations: user turns
answered with a short acknowledgement). Every request the client sent is captured (``provide-client-params``) and
priced with the replay simulator (``promptcache.replay.PromptCacheSimulator`` with ``price_for``: Bedrock's cache
rules, one cache shared by all conversations, requests 10 s apart); output tokens at the output price.

Configurations: ``none`` (no plugin; the user's memories pasted into the system prompt, as an app without typed
memory does), each plugin alone (``memory``: ``TypedMemoryMiddleware``; ``response``: ``ResponseCache``;
``points``: ``BedrockCachePoints``; ``intention``: ``IntentionCache`` serving repeated tool calls), ``all`` four,
``all-but-memory`` (memory off, the memories pasted into the system prompt) and ``all-but-memory-bare`` (memory off
and no memories at all): the cache-read share with memory off.

    python bench/all_plugins.py                       # 20 tau-bench + 10 BFCL conversations
    python bench/all_plugins.py --tau 200 --bfcl 37   # everything
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
from botocore.stub import Stubber
from langchain.agents import create_agent
from langchain_aws import ChatBedrockConverse
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import MemorySaver
from langgraph.store.memory import InMemoryStore

sys.path.insert(0, str(Path(__file__).resolve().parent))

from shared_data import find_data_file  # noqa: E402

from promptcache import InMemoryServerCache, IntentionCache, IntentionMemory, ResponseCache  # noqa: E402
from promptcache.integrations.bedrock import BedrockCachePoints  # noqa: E402
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore  # noqa: E402
from promptcache.replay import PromptCacheSimulator, price_for  # noqa: E402
from promptcache.replay._models import cache_rules  # noqa: E402
from promptcache.replay._simulator import Checkpoint  # noqa: E402
from promptcache.replay._tokens import get_encoding  # noqa: E402

MODEL = "us.anthropic.claude-sonnet-4-20250514-v1:0"
PRICED_AS = "anthropic.claude-sonnet-4-20250514-v1:0"
GAP_S = 10.0
CONFIGS = ("none", "memory", "response", "points", "intention", "all", "all-but-memory", "all-but-memory-bare")
PLUGINS = {
    "none": (),
    "memory": ("memory",),
    "response": ("response",),
    "points": ("points",),
    "intention": ("intention",),
    "all": ("response", "memory", "intention", "points"),
    "all-but-memory": ("response", "intention", "points"),
    "all-but-memory-bare": ("response", "intention", "points"),
}
BARE = frozenset({"all-but-memory-bare"})
"""Configurations whose system prompt holds no memories at all (memory off, and nothing pasted instead)."""


@dataclass
class Conversation:
    """One recorded conversation: who, the system prompt, the user turns, the assistant replies in order and the
    memories the user has."""

    cid: str
    user: str
    system: str
    turns: list[str]
    replies: list[dict[str, Any]]
    memories: list[tuple[str, str]] = field(default_factory=list)


def _reply(message: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"text": message["content"]}] if message.get("content") else []
    for call in message.get("tool_calls") or []:
        args = json.loads(call["function"]["arguments"] or "{}")
        content.append({"toolUse": {"toolUseId": call["id"], "name": call["function"]["name"], "input": args}})
    return {"content": content or [{"text": "OK"}], "tools": bool(message.get("tool_calls"))}


def tau_conversations(path: Path, limit: int) -> list[Conversation]:
    """The first ``limit`` tau-bench conversations; the user's memories: one rule, their id, the task."""
    out = []
    for row in json.loads(path.read_text())[:limit]:
        traj = row["traj"]
        user = row["info"]["task"]["user_id"]
        memories = [
            ("feedback", "Confirm the details with the customer before changing a reservation."),
            ("user_fact", f"The customer's user id is {user}."),
            ("project_state", f"Open case: airline task {row['task_id']}."),
        ]
        out.append(
            Conversation(
                cid=f"tau-{row['task_id']}-{row['trial']}",
                user=user,
                system=traj[0]["content"],
                turns=[m["content"] for m in traj if m["role"] == "user"],
                replies=[_reply(m) for m in traj if m["role"] == "assistant"],
                memories=memories,
            )
        )
    return out


def bfcl_conversations(path: Path, limit: int) -> list[Conversation]:
    """The first ``limit`` BFCL memory prerequisite conversations (user turns; replies are acknowledgements)."""
    data = json.loads(path.read_text())["prereq_conversations"]
    out = []
    for scenario, convs in data.items():
        for conv in convs:
            turns = [m["content"] for turn in conv["question"] for m in turn if m["role"] == "user"]
            out.append(
                Conversation(
                    cid=conv["id"],
                    user=f"bfcl-{scenario}",
                    system=f"You are the {scenario} assistant. Keep track of what the user tells you.",
                    turns=turns,
                    replies=[{"content": [{"text": "Noted, thank you."}], "tools": False} for _ in turns],
                    memories=[("feedback", "Answer briefly."), ("user_fact", f"The user is a {scenario} client.")],
                )
            )
    return out[:limit]


def _tool_outputs(rows: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for row in rows:
        calls = {}
        for m in row["traj"]:
            for call in m.get("tool_calls") or []:
                calls[call["id"]] = call
            if m["role"] == "tool" and m.get("tool_call_id") in calls:
                call = calls[m["tool_call_id"]]
                args = json.loads(call["function"]["arguments"] or "{}")
                out.setdefault((call["function"]["name"], json.dumps(args, sort_keys=True)), m["content"])
    return out


def make_tools(rows: list[dict[str, Any]]) -> list[StructuredTool]:
    """One tool per recorded tool name; a call returns the recorded result for the same arguments."""
    outputs = _tool_outputs(rows)
    args: dict[str, set[str]] = {}
    for name, key in outputs:
        args.setdefault(name, set()).update(json.loads(key))

    def make(name: str) -> StructuredTool:
        def run(**kwargs: Any) -> str:
            return outputs.get((name, json.dumps(kwargs, sort_keys=True)), "{}")

        schema = {"type": "object", "properties": {a: {} for a in sorted(args[name])}}
        return StructuredTool.from_function(run, name=name, description=f"The airline {name} tool.", args_schema=schema)

    return [make(name) for name in sorted(args)]


class Replayer:
    """A stubbed Bedrock client that answers each request with the conversation's next recorded reply."""

    def __init__(self) -> None:
        self.client = boto3.client(
            "bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
        )
        self.stub = Stubber(self.client)
        self.sent: list[dict[str, Any]] = []
        self.replies: list[dict[str, Any]] = []
        self.client.meta.events.register("provide-client-params.bedrock-runtime.Converse", self._on_request)
        self.stub.activate()

    def _on_request(self, params: dict[str, Any], **_: Any) -> None:
        self.sent.append(copy.deepcopy(params))
        k = sum(m["role"] == "assistant" for m in params["messages"])
        reply = self.replies[k] if k < len(self.replies) else {"content": [{"text": "OK"}], "tools": False}
        self.stub.add_response(
            "converse",
            {
                "output": {"message": {"role": "assistant", "content": reply["content"]}},
                "stopReason": "tool_use" if reply["tools"] else "end_turn",
                "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                "metrics": {"latencyMs": 1},
            },
        )


def _middleware(config: str, memory: TypedMemoryStore) -> list[Any]:
    points = BedrockCachePoints()
    built = {
        "response": lambda: ResponseCache(InMemoryServerCache(), ttl_s=3600),
        "memory": lambda: TypedMemoryMiddleware(
            memory, prompt_caching=points if "points" in PLUGINS[config] else False
        ),
        "intention": lambda: IntentionCache(IntentionMemory(), serve_repeats=True),
        "points": lambda: points,
    }
    return [built[name]() for name in PLUGINS[config]]


def run_config(config: str, convs: list[Conversation], tools: list[StructuredTool]) -> list[dict[str, Any]]:
    """Run every conversation through one agent with ``config``'s plugins; the requests sent, in order."""
    replayer = Replayer()
    model = ChatBedrockConverse(model=MODEL, client=replayer.client, region_name="us-east-1")
    memory = TypedMemoryStore(InMemoryStore())
    with_memory = "memory" in PLUGINS[config]
    agents: dict[str, Any] = {}
    for conv in convs:
        for kind, text in conv.memories:
            memory.put(conv.user, kind, text)
        system = conv.system
        if not with_memory and config not in BARE:  # the app pastes the user's memories into its system prompt
            system = system + "\n\n" + "\n".join(text for _, text in conv.memories)
        key = system if not with_memory else conv.system
        if key not in agents:
            agents[key] = create_agent(
                model,
                tools=tools,
                system_prompt=system,
                checkpointer=MemorySaver(),
                middleware=_middleware(config, memory),
            )
        agent = agents[key]
        replayer.replies = conv.replies
        run = {"configurable": {"thread_id": f"{config}-{conv.cid}", "user_id": conv.user}, "recursion_limit": 200}
        for turn in conv.turns:
            agent.invoke({"messages": [("user", turn)]}, run)
    return replayer.sent


def _items(request: dict[str, Any]) -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = [("tools", t) for t in (request.get("toolConfig") or {}).get("tools", [])]
    items += [("system", b) for b in request.get("system", [])]
    for message in request["messages"]:
        items += [("messages", {"role": message["role"], **b}) for b in message["content"]]
    return items


def _block_tokens(block: Any, enc: Any) -> int:
    text = block.get("text") if isinstance(block, dict) else None
    return len(enc.encode(text if isinstance(text, str) else json.dumps(block, sort_keys=True)))


def price(
    requests: list[dict[str, Any]], replies_tokens: Callable[[dict[str, Any]], int] | None = None
) -> dict[str, float]:
    """Bill ``requests`` (Converse parameters, in send order, `GAP_S` apart) with the replay simulator."""
    enc = get_encoding()
    price_table = price_for(PRICED_AS)
    sim = PromptCacheSimulator(cache_rules(PRICED_AS), price_table)
    cost = read = total = 0.0
    for i, request in enumerate(requests):
        blocks, points = [], []
        for field_name, block in _items(request):
            if "cachePoint" in block:
                points.append(
                    Checkpoint(len(blocks), 3600.0 if block["cachePoint"].get("ttl") == "1h" else 300.0, field_name)
                )
            else:
                blocks.append(block)
        cum, hashes, h = [0], [b""], hashlib.sha256()
        for block in blocks:
            cum.append(cum[-1] + _block_tokens(block, enc))
            h.update(json.dumps(block, sort_keys=True).encode())
            hashes.append(h.copy().digest())
        points = [p for p in points if p.boundary > 0]
        billed = sim.simulate(cum, hashes, len(blocks), points, i * GAP_S)
        cost += billed.cost_usd
        read += billed.read_tokens
        total += billed.input_tokens + billed.read_tokens + billed.write_tokens
    return {"requests": len(requests), "input_cost_usd": cost, "cache_read_share": read / total if total else 0.0}


def measure(tau: int, bfcl: int) -> dict[str, dict[str, float]]:
    """Every configuration's requests and input-side cost on the first ``tau`` / ``bfcl`` conversations."""
    tau_path = find_data_file("tau_bench_gpt-4o-airline.json")
    bfcl_path = find_data_file("bfcl_v4_memory_bundle.json")
    assert tau_path is not None and bfcl_path is not None
    rows = json.loads(tau_path.read_text())
    tools = make_tools(rows)
    convs = tau_conversations(tau_path, tau) + bfcl_conversations(bfcl_path, bfcl)
    return {config: price(run_config(config, convs, tools)) for config in CONFIGS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tau", type=int, default=20)
    parser.add_argument("--bfcl", type=int, default=10)
    args = parser.parse_args(argv)
    results = measure(args.tau, args.bfcl)
    none = results["none"]["input_cost_usd"]
    print(f"{'config':16s} {'requests':>8s} {'input cost $':>12s} {'vs none':>8s} {'cache-read share':>16s}")
    for config, r in results.items():
        print(
            f"{config:16s} {r['requests']:8.0f} {r['input_cost_usd']:12.4f} {r['input_cost_usd'] / none:8.1%} "
            f"{r['cache_read_share']:16.1%}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
