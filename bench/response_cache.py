"""ResponseCache speed: key building vs LangChain's own cache key, and per-turn overhead in create_agent.

    python bench/response_cache.py [--n 300] [--runs 5] [--redis redis://127.0.0.1:6379/0]

Data: the first ~20 messages of a real tau-bench airline conversation (found by bench/shared_data.py, MIT), grown with more of
the same conversation to ~8,000 tokens (tiktoken cl100k_base, offline copy), and 10 tools.
1. Key building, p50 and MB/s of the canonical JSON the key covers: the processor's key (``request_key``) with its
   memos in four states (the same prompt again; the thread's next call; the same values as new objects; emptied)
   vs LangChain's key for the same prompt (``dumps(messages)`` + ``model._get_llm_string(**bound_kwargs)``).
2. The model identity string: ours vs LangChain's ``_get_llm_string()`` (the same string).
   Then a hit's decode (``decode_hit``) vs the raw Redis GET of the same entry, and the first key of a process
   (fresh processes, ours vs LangChain's, with and without the tool schemas converted before).
3. A ``create_agent`` turn with an instant fake model: no cache, miss and hit (in-memory), miss and hit (Redis),
   a raw redis-py GET of the same entry timed alone (back-to-back), and the same GET made inside a turn (a
   no-cache turn with a middleware making it, minus one with the middleware doing nothing); ratios within each
   run, ``--runs`` runs, medians over runs, the load average before and after, and CPU-time p50s
   (``time.thread_time``) next to the wall-clock ones; also LangChain's own cache hit (``cache=InMemoryCache()`` on
   the model), and the miss over a pass-through middleware and the hit over LangChain's hit by the mean of the
   fastest tenth of calls (on a loaded machine, the calls no other process interrupted).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
import uuid
from typing import Any

import redis
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.caches import InMemoryCache
from langchain_core.load import dumps
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, convert_to_messages
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, create_model
from shared_data import find_data_file

from promptcache import InMemoryServerCache, ResponseCache
from promptcache._keys import canonical_json
from promptcache.integrations.redis import RedisCache
from promptcache.response_cache._keys import request_key
from promptcache.response_cache._model_identity import llm_string
from promptcache.testing import ScriptedChatModel


def conversation(target_tokens: int = 8000) -> list[Any]:
    """20 messages (system first, a user message last) totalling about ``target_tokens`` tokens."""
    from promptcache.cache_points._tokens import get_encoding

    enc = get_encoding()  # cl100k_base from the ranks file shipped with promptcache: no download
    trajs = json.loads(find_data_file("tau_bench_gpt-4o-airline.json").read_text())
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
    for i, name in enumerate(
        [
            "get_user_details",
            "get_reservation_details",
            "search_direct_flight",
            "search_onestop_flight",
            "book_reservation",
            "cancel_reservation",
            "update_reservation_flights",
            "update_reservation_baggages",
            "update_reservation_passengers",
            "send_certificate",
        ]
    ):
        args = create_model(
            f"{name}_args",
            user_id=(str, Field(description="The user id, such as 'sara_doe_496'.")),
            reservation_id=(str, Field(description="The reservation id, such as '8JX2WO'.")),
            amount=(int, Field(default=0, description=f"Amount in dollars, tool {i}.")),
        )
        out.append(
            StructuredTool.from_function(
                lambda **kw: "ok",
                name=name,
                args_schema=args,
                description=f"{name.replace('_', ' ').capitalize()}. " * 3,
            )
        )
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


def interleaved(
    variants: dict[str, Any], n: int, cpu: dict[str, float] | None = None, fast: dict[str, float] | None = None
) -> dict[str, float]:
    """p50 seconds of each variant, run in rounds (one call of each per round, in a new random order each round) so
    machine drift and cache effects of the order hit all alike.

    With ``cpu``, also fills it with the p50 CPU seconds of this thread per call (``time.thread_time``): time spent
    waiting for the CPU while other processes run is left out, network waits too. With ``fast``, fills it with the
    mean of each variant's fastest tenth of calls (on a loaded machine the calls no other process interrupted).
    """
    samples: dict[str, list[float]] = {name: [] for name in variants}
    cpu_samples: dict[str, list[float]] = {name: [] for name in variants}
    order = list(variants.items())
    shuffle = random.Random(n).shuffle
    for i in range(-10, n):
        shuffle(order)
        for name, fn in order:
            c0 = time.thread_time()
            t0 = time.perf_counter()
            fn(i)
            if i >= 0:
                samples[name].append(time.perf_counter() - t0)
                cpu_samples[name].append(time.thread_time() - c0)
    if cpu is not None:
        cpu.update({name: statistics.median(v) for name, v in cpu_samples.items()})
    if fast is not None:
        fast.update({name: fastest_tenth(v) for name, v in samples.items()})
    return {name: sorted(v)[len(v) // 2] for name, v in samples.items()}


def fastest_tenth(samples: list[float]) -> float:
    """Mean of the fastest tenth of ``samples`` (at least one)."""
    ordered = sorted(samples)
    return statistics.fmean(ordered[: max(1, len(ordered) // 10)])


def bench_keys(msgs: list[Any], tls: list[Any], n: int) -> None:
    """Our key in four states of its memos vs LangChain's key (which has none), interleaved in one run."""
    import copy

    from promptcache import _message_digests as md
    from promptcache._keys import canonical_messages
    from promptcache._tool_keys import canonical_tools

    model = ScriptedChatModel(replies=["ok"], cycle=True)
    formatted = [convert_to_openai_tool(t) for t in tls]  # what bind_tools hands LangChain's cache
    history = msgs[1:-1]
    fresh = iter(range(10**9))

    def request(messages: list[Any]) -> ModelRequest:
        return ModelRequest(model=model, messages=messages, system_message=msgs[0], tools=tls, tool_choice=None)

    same = request(msgs[1:])
    rebuilt = [copy.deepcopy(msgs[1:]) for _ in range(8)]  # new objects, same values (a checkpoint read back)

    def cold(i: int) -> None:
        md._MEMO.clear()
        md._PREFIXES.clear()
        request_key(same, "bench", "user-1")

    canon = canonical_json(canonical_messages(msgs)) + canonical_json(canonical_tools(tls))
    lc_prompt = dumps(msgs)
    results = interleaved(
        {
            "same prompt again (a retry, or a second cache)": lambda i: request_key(same, "bench", "user-1"),
            "next call of the thread (history + a new message)": lambda i: request_key(
                request([*history, HumanMessage(f"question {next(fresh)}")]), "bench", "user-1"
            ),
            "same values, new objects (checkpoint read back)": lambda i: request_key(
                request(rebuilt[i % 8]), "bench", "user-1"
            ),
            "cold (memos emptied)": cold,
            "LangChain dumps(messages) + _get_llm_string": lambda i: (
                dumps(msgs),
                model._get_llm_string(tools=formatted),
            ),
        },
        n,
    )
    theirs = results.pop("LangChain dumps(messages) + _get_llm_string")
    print("## key building (20 messages, ~8,000 tokens, 10 tools)")
    print(
        f"canonical JSON the key covers: {len(canon) / 1e6:.3f} MB; LangChain's dumps(messages): "
        f"{len(lc_prompt) / 1e6:.3f} MB"
    )
    print("| key | p50 ms | MB/s of canonical JSON covered | ratio to LangChain's |")
    print("|---|---:|---:|---:|")
    for name, value in results.items():
        print(f"| promptcache, {name} | {value * 1e3:.3f} | {len(canon) / 1e6 / value:,.0f} | {value / theirs:.2f}x |")
    print(
        f"| LangChain dumps(messages) + _get_llm_string | {theirs * 1e3:.3f} | {len(lc_prompt) / 1e6 / theirs:,.0f} |"
        " 1.00x |"
    )
    print("target: every row <= 1.00x\n")


def bench_model_identity(n: int) -> None:
    """The model part of the key: ours (``llm_string``) vs LangChain's ``_get_llm_string()``, same string."""
    from langchain_aws import ChatBedrockConverse

    bedrock = ChatBedrockConverse(
        model="anthropic.claude-3-haiku-20240307-v1:0",
        region_name="us-east-1",
        aws_access_key_id="AKIAEXAMPLE",
        aws_secret_access_key="example",
        temperature=0.1,
    )
    print("## model identity string (per call)")
    print("| model | LangChain `_get_llm_string()` us | promptcache `llm_string()` us | ratio |")
    print("|---|---:|---:|---:|")
    for label, model in (
        ("ScriptedChatModel (not serialisable)", ScriptedChatModel()),
        ("ChatBedrockConverse (serialisable, memo)", bedrock),
    ):
        assert llm_string(model) == model._get_llm_string()
        both = interleaved(
            {"theirs": lambda i, m=model: m._get_llm_string(), "ours": lambda i, m=model: llm_string(m)}, n
        )
        print(
            f"| {label} | {both['theirs'] * 1e6:.1f} | {both['ours'] * 1e6:.1f} | "
            f"{both['ours'] / both['theirs']:.2f}x |"
        )
    print()


def bench_turns(msgs: list[Any], tls: list[Any], n: int, redis_url: str, runs: int) -> None:
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
    mem, plain = InMemoryServerCache(), agent(None)
    amem, ared = agent(mem), agent(rcache)
    key = turn(ared, "same question")["messages"][-1].response_metadata["promptcache"]["key"]
    turn(amem, "same question")
    lc_cached = create_agent(  # LangChain's own cache: the model's cache= (its key: dumps(messages) + llm string)
        ScriptedChatModel(replies=["The flight is confirmed."], cycle=True, usage=False, cache=InMemoryCache()),
        tools=tls,
    )
    turn(lc_cached, "same question")

    class RawGet(AgentMiddleware):
        """No cache: one raw redis-py GET of the entry where a hit makes its GET (or nothing, with ``get=False``)."""

        def __init__(self, get: bool) -> None:
            super().__init__()
            self.get = get

        def wrap_model_call(self, request: ModelRequest, handler: Any) -> Any:
            if self.get:
                raw.get(rcache.full_key(key))
            return handler(request)

    with_get = create_agent(
        ScriptedChatModel(replies=["The flight is confirmed."], cycle=True, usage=False),
        tools=tls,
        middleware=[RawGet(True)],
    )

    class Canned(AgentMiddleware):
        """The floor of a hit: a middleware returning a reply it already holds (no key, no read, no decode)."""

        def __init__(self, reply: Any) -> None:
            super().__init__()
            self.reply = reply

        def wrap_model_call(self, request: ModelRequest, handler: Any) -> Any:
            return ModelResponse(result=[self.reply])

    canned = create_agent(
        ScriptedChatModel(replies=["The flight is confirmed."], cycle=True, usage=False),
        tools=tls,
        middleware=[Canned(AIMessage("The flight is confirmed."))],
    )
    without_get = create_agent(
        ScriptedChatModel(replies=["The flight is confirmed."], cycle=True, usage=False),
        tools=tls,
        middleware=[RawGet(False)],
    )

    def variants(tag: str) -> dict[str, Any]:
        """The variants; ``tag`` makes every miss of a run a new prompt."""
        return {
            "no cache": lambda i: turn(plain, f"q{tag}-{i}"),
            "miss, in-memory": lambda i: turn(amem, f"miss{tag}-{i}"),
            "hit, in-memory": lambda i: turn(amem, "same question"),
            "miss, Redis": lambda i: turn(ared, f"miss{tag}-{i}"),
            "hit, Redis": lambda i: turn(ared, "same question"),
            "raw redis-py GET of the entry": lambda i: raw.get(rcache.full_key(key)),
            "no cache, pass-through middleware": lambda i: turn(without_get, f"p{tag}-{i}"),
            "no cache, middleware making one raw GET": lambda i: turn(with_get, f"g{tag}-{i}"),
            "LangChain cache hit (InMemoryCache on the model)": lambda i: turn(lc_cached, "same question"),
            "canned reply middleware (the floor of a hit)": lambda i: turn(canned, "same question"),
        }

    per_run: list[dict[str, float]] = []
    cpu_runs: list[dict[str, float]] = []
    fast_runs: list[dict[str, float]] = []
    print(f"## create_agent turn, instant fake model (20-message history, 10 tools); {runs} run(s) of {n} rounds")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        "| run | miss overhead, in-memory | hit / no cache, in-memory | Redis hit - in-memory hit, in raw GETs"
        " (back-to-back) | same, in raw GETs made inside a turn | miss overhead, CPU time"
        " | miss over pass-through, fastest tenth | hit / LangChain's hit, fastest tenth"
        " | canned reply / LangChain's hit, fastest tenth |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for run in range(runs):
        cpu: dict[str, float] = {}
        fast: dict[str, float] = {}
        results = interleaved(variants(uuid.uuid4().hex[:6]), n, cpu, fast)
        per_run.append(results)
        cpu_runs.append(cpu)
        fast_runs.append(fast)
        print(
            f"| {run + 1} | {miss_overhead(results):+.1%} | {hit_ratio(results):.2f}x | {redis_gets(results):.2f} |"
            f" {redis_gets_in_turn(results):.2f} | {miss_overhead(cpu):+.1%} | {miss_over_floor(fast):+.1%} |"
            f" {hit_vs_langchain(fast):.2f}x | {canned_vs_langchain(fast):.2f}x |"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    median = {name: statistics.median(r[name] for r in per_run) for name in per_run[0]}
    median_cpu = {name: statistics.median(r[name] for r in cpu_runs) for name in per_run[0]}
    median_fast = {name: statistics.median(r[name] for r in fast_runs) for name in per_run[0]}
    base = median["no cache"]
    print("| turn (median over runs) | p50 ms | vs no cache | CPU p50 ms | fastest tenth ms |")
    print("|---|---:|---:|---:|---:|")
    for name, value in median.items():
        print(
            f"| {name} | {value * 1e3:.3f} | {value / base:.2f}x | {median_cpu[name] * 1e3:.3f} |"
            f" {median_fast[name] * 1e3:.3f} |"
        )
    print(
        f"miss over a pass-through middleware (the floor), fastest tenth, median of runs:"
        f" {statistics.median(miss_over_floor(r) for r in fast_runs):+.1%}"
        f" (range {min(miss_over_floor(r) for r in fast_runs):+.1%} to {max(miss_over_floor(r) for r in fast_runs):+.1%};"
        " target <= +5%);"
        f" p50: {statistics.median(miss_over_floor(r) for r in per_run):+.1%}"
    )
    print(
        f"hit / LangChain's cache hit, fastest tenth, median of runs:"
        f" {statistics.median(hit_vs_langchain(r) for r in fast_runs):.2f}x"
        f" (range {min(hit_vs_langchain(r) for r in fast_runs):.2f}x to {max(hit_vs_langchain(r) for r in fast_runs):.2f}x;"
        " target <= 0.40x);"
        f" p50: {statistics.median(hit_vs_langchain(r) for r in per_run):.2f}x; the floor (canned reply):"
        f" {statistics.median(canned_vs_langchain(r) for r in fast_runs):.2f}x"
    )
    print(
        f"miss overhead (in-memory), median of runs: {statistics.median(miss_overhead(r) for r in per_run):+.1%}"
        f" (target <= +15%); CPU time: {statistics.median(miss_overhead(r) for r in cpu_runs):+.1%}"
    )
    print(
        f"hit vs no cache (in-memory), median of runs: {statistics.median(hit_ratio(r) for r in per_run):.2f}x"
        " (target <= 1.00x)"
    )
    print(
        f"Redis hit - in-memory hit, median of runs: {statistics.median(redis_gets(r) for r in per_run):.2f}"
        " back-to-back raw GETs, "
        f"{statistics.median(redis_gets_in_turn(r) for r in per_run):.2f} raw GETs made inside a turn"
        " (target <= 1.50)"
    )
    rcache.clear()
    rcache.close()
    raw.close()


def miss_over_floor(r: dict[str, float]) -> float:
    """A miss turn over a turn whose only middleware passes the call through (what any middleware costs)."""
    return r["miss, in-memory"] / r["no cache, pass-through middleware"] - 1


def hit_vs_langchain(r: dict[str, float]) -> float:
    return r["hit, in-memory"] / r["LangChain cache hit (InMemoryCache on the model)"]


def canned_vs_langchain(r: dict[str, float]) -> float:
    """The floor of a hit (a middleware returning a reply it holds) over LangChain's cache hit."""
    return r["canned reply middleware (the floor of a hit)"] / r["LangChain cache hit (InMemoryCache on the model)"]


def miss_overhead(r: dict[str, float]) -> float:
    return r["miss, in-memory"] / r["no cache"] - 1


def hit_ratio(r: dict[str, float]) -> float:
    return r["hit, in-memory"] / r["no cache"]


def redis_gets(r: dict[str, float]) -> float:
    """Redis hit - in-memory hit, in raw GETs timed back-to-back (the GET alone, between turns)."""
    return (r["hit, Redis"] - r["hit, in-memory"]) / r["raw redis-py GET of the entry"]


def redis_gets_in_turn(r: dict[str, float]) -> float:
    """Redis hit - in-memory hit, in raw GETs made where a hit makes its GET (inside a turn, after LangGraph's
    work): the turn with a middleware making one raw GET minus the turn with the same middleware doing nothing."""
    in_turn = r["no cache, middleware making one raw GET"] - r["no cache, pass-through middleware"]
    return (r["hit, Redis"] - r["hit, in-memory"]) / in_turn


def bench_decode(redis_url: str, n: int) -> None:
    from langchain_core.messages import AIMessage

    from promptcache.response_cache._entry import decode_hit, encode_entry

    usage = {"input_tokens": 8012, "output_tokens": 7, "total_tokens": 8019}
    replies = {
        "text reply": AIMessage(
            "The flight is confirmed.",
            response_metadata={"model_name": "m", "finish_reason": "stop"},
            usage_metadata=usage,
        ),
        "tool-call reply": AIMessage(
            "",
            tool_calls=[{"name": "get_reservation_details", "args": {"reservation_id": "8JX2WO"}, "id": "call_1"}],
            response_metadata={"model_name": "m", "finish_reason": "tool_calls"},
            usage_metadata=usage,
        ),
    }
    raw = redis.Redis.from_url(redis_url)
    key = f"pcbench:{uuid.uuid4().hex[:8]}:entry"
    print(f"## a hit's decode vs the Redis GET that fetched it ({n} rounds, load {os.getloadavg()[0]:.2f})")
    print(
        "| entry | bytes | decode us (fastest tenth) | GET us (fastest tenth) | decode / GET | decode p50 / GET p50 |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    try:
        for label, reply in replies.items():
            entry = encode_entry(ModelResponse(result=[reply]))
            raw.set(key, entry, px=300_000)
            fast: dict[str, float] = {}
            p50 = interleaved(
                {"decode": lambda i, e=entry: decode_hit(e, key), "get": lambda i: raw.get(key)}, n, fast=fast
            )
            print(
                f"| {label} | {len(entry)} | {fast['decode'] * 1e6:.1f} | {fast['get'] * 1e6:.1f} |"
                f" {fast['decode'] / fast['get']:.2f}x | {p50['decode'] / p50['get']:.2f}x |"
            )
    finally:
        raw.delete(key)
        raw.close()
    print("target: decode / GET < 1.00x\n")


def warm_up_first_key() -> None:
    """Warm a fresh process on an unrelated one-tool request (our key, LangChain's dumps and llm string), so that
    the first key timed or counted after it pays only for its own request, not for imports and first-use set-up."""
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool

    @tool
    def warm_up(x: int) -> str:
        """A tool of the warm-up request."""
        return str(x)

    other = [
        SystemMessage("s"),
        HumanMessage("h"),
        AIMessage("", tool_calls=[{"name": "warm_up", "args": {"x": 1}, "id": "c"}]),
        ToolMessage("r", tool_call_id="c"),
    ]
    warm_model = ScriptedChatModel(replies=["w"])
    request_key(ModelRequest(model=warm_model, messages=other[1:], system_message=other[0], tools=[warm_up]), "w", None)
    dumps(other)
    warm_model._get_llm_string(tools=[convert_to_openai_tool(warm_up)])


def first_key_child(which: str) -> None:
    """In a fresh process: warm up on an unrelated request, then time one first key (printed in ms)."""

    from promptcache import _message_digests as md
    from promptcache.response_cache import _keys as rk
    from promptcache.response_cache._model_identity import model_identity
    from promptcache.response_cache._tools_digest import tools_digest

    warm_up_first_key()
    msgs, tls, model = conversation(), tools(), ScriptedChatModel(replies=["ok"])
    if which in ("ours, tools converted before", "LangChain"):
        formatted = [convert_to_openai_tool(t) for t in tls]  # bind_tools did this on an earlier call
    clock = time.perf_counter
    if which == "LangChain":
        t0 = clock()
        dumps(msgs)
        model._get_llm_string(tools=formatted)
        print(f"{(clock() - t0) * 1e3:.4f}")
    elif which == "LangChain, converting the tools too":
        t0 = clock()
        dumps(msgs)
        model._get_llm_string(tools=[convert_to_openai_tool(t) for t in tls])
        print(f"{(clock() - t0) * 1e3:.4f}")
    elif which == "parts":
        t0 = clock()
        md.message_digests([msgs[0], *msgs[1:]])
        t1 = clock()
        tools_digest(tls)
        t2 = clock()
        model_identity(model)
        t3 = clock()
        print(f"{(t1 - t0) * 1e3:.4f} {(t2 - t1) * 1e3:.4f} {(t3 - t2) * 1e3:.4f}")
    elif which == "cold steps":
        cold_steps(msgs[0])
    else:
        request = ModelRequest(model=model, messages=msgs[1:], system_message=msgs[0], tools=tls)
        t0 = clock()
        rk.request_key(request, "bench", "user-1")
        print(f"{(clock() - t0) * 1e3:.4f}")


def cold_steps(message: Any) -> None:
    """The steps of one message's digest, timed one by one (us), three rounds in this fresh process; then a
    six-key dict's ``tuple(d.values())``, four rounds: what a first operation costs against the same one again."""
    import hashlib

    from promptcache import _message_digests as md
    from promptcache._keys import _message, _ToolIds, canonical_json

    clock = time.perf_counter_ns
    for _ in range(3):
        t = [clock()]
        fields = message.__dict__
        tuple(fields.values())
        t.append(clock())
        md._value_key(type(message), fields)
        t.append(clock())
        out = _message(message, _ToolIds())
        t.append(clock())
        data = canonical_json(out, exact_floats=False)
        t.append(clock())
        h = hashlib.sha256(data)
        t.append(clock())
        h.hexdigest()
        t.append(clock())
        print(
            "snapshot, value key, canonical dict, JSON, SHA-256, hex:",
            *(f"{(b - a) / 1e3:.1f}" for a, b in zip(t, t[1:])),
        )
    d = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6}
    for _ in range(4):
        t0 = clock()
        tuple(d.values())
        print(f"tuple(d.values()): {(clock() - t0) / 1e3:.2f}")


FIRST_KEY_VARIANTS = (
    "ours, tools converted before",
    "LangChain",
    "ours, nothing converted before",
    "LangChain, converting the tools too",
)


def bench_first_key(rounds: int) -> None:
    """The first key of a process, ours vs LangChain's: ``rounds`` fresh processes per variant, interleaved."""
    import subprocess
    import sys

    def child(which: str) -> str:
        out = subprocess.run(
            [sys.executable, __file__, "--first-key", which], capture_output=True, text=True, check=True
        )
        return out.stdout.strip().splitlines()[-1]

    times: dict[str, list[float]] = {v: [] for v in FIRST_KEY_VARIANTS}
    parts: list[list[float]] = []
    order = [*FIRST_KEY_VARIANTS, "parts"]
    for _ in range(rounds):
        random.shuffle(order)  # a new order per round: no variant always follows the same one
        for variant in order:
            if variant == "parts":
                parts.append([float(x) for x in child("parts").split()])
            else:
                times[variant].append(float(child(variant)))
    print(f"## first key of a process ({rounds} fresh processes per variant, load {os.getloadavg()[0]:.2f})")
    print("| first key | median ms | fastest ms |")
    print("|---|---:|---:|")
    for variant, values in times.items():
        print(f"| {variant} | {statistics.median(values):.3f} | {min(values):.3f} |")
    med = {v: statistics.median(x) for v, x in times.items()}
    low = {v: min(x) for v, x in times.items()}
    print(
        f"ours / LangChain's, tools converted before (bind_tools on an earlier call): median"
        f" {med['ours, tools converted before'] / med['LangChain']:.2f}x, fastest"
        f" {low['ours, tools converted before'] / low['LangChain']:.2f}x (target <= 0.50x)"
    )
    pairs = [a / b for a, b in zip(times["ours, tools converted before"], times["LangChain"], strict=True)]
    print(
        f"same, per round (the two fresh processes of a round): median {statistics.median(pairs):.2f}x,"
        f" range {min(pairs):.2f}x to {max(pairs):.2f}x"
    )
    print(
        f"ours / LangChain's, nothing converted before (both pay the first conversion): median"
        f" {med['ours, nothing converted before'] / med['LangChain, converting the tools too']:.2f}x"
    )
    names = ("prompt digests", "tools digest", "model identity")
    print(
        "parts, fastest ms (a process whose tools were never converted): "
        + ", ".join(f"{name} {min(p[i] for p in parts):.3f}" for i, name in enumerate(names))
    )
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--first-key", choices=(*FIRST_KEY_VARIANTS, "parts", "cold steps"), help=argparse.SUPPRESS)
    parser.add_argument("--first-key-rounds", type=int, default=9, help="fresh processes per first-key variant")
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5, help="repeat the turn comparison; medians are reported")
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument(
        "--only", choices=("keys", "identity", "decode", "first-key", "turns"), help="run one part only"
    )
    args = parser.parse_args()
    if args.first_key:
        first_key_child(args.first_key)
        return
    msgs, tls = conversation(), tools()
    if args.only in (None, "keys"):
        bench_keys(msgs, tls, args.n * 3)
    if args.only in (None, "identity"):
        bench_model_identity(args.n * 3)
    if args.only in (None, "decode"):
        bench_decode(args.redis, args.n * 3)
    if args.only in (None, "first-key"):
        bench_first_key(args.first_key_rounds)
    if args.only in (None, "turns"):
        bench_turns(msgs, tls, args.n, args.redis, args.runs)


if __name__ == "__main__":
    main()
