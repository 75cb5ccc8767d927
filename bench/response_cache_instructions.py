"""Instructions per ResponseCache call (valgrind callgrind): deterministic where wall-clock ratios are noisy.

    python bench/response_cache_instructions.py [--turns 20]

Runs this script under ``valgrind --tool=callgrind`` three times: once for the steady state (``--inner steady``)
and once per first key (``--inner "first key, ours"`` / ``"first key, LangChain"``, each a fresh process). Only
what runs inside ``itertools.filterfalse``'s iteration is counted (``--collect-atstart=no
--toggle-collect=filterfalse_next``; neither LangChain, LangGraph nor pydantic uses it), and callgrind writes the
count so far at each ``os.getppid()`` (``--dump-before=getppid``), called before and after each variant, so
imports, set-up and warm-up are left out and one process measures every variant. Each variant runs 10 warm-up calls, a full garbage
collection, then ``--turns`` counted calls; the report is instructions per call.

Variants: ``create_agent`` turns (no cache; a pass-through middleware, the floor of a miss; a ResponseCache miss
and hit, in-memory; LangChain's own cache hit, ``cache=InMemoryCache()`` on the model; a middleware returning a
reply it holds, the floor of a hit), the key of the thread's next call and a hit's decode alone, and the first key
of a process (after a warm-up on an unrelated request, as ``bench/response_cache.py``'s first-key part; tools
converted before), and in one more fresh process the first key's three parts counted one after the other (prompt
digests, tools digest, head). Same prompt and tools as bench/response_cache.py. Needs ``valgrind`` on PATH (Debian package);
``PYTHONHASHSEED=0`` is set for the children.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

STEADY = (
    "turn, no cache",
    "turn, pass-through middleware",
    "turn, ResponseCache miss",
    "turn, ResponseCache hit",
    "turn, LangChain cache hit",
    "turn, canned reply middleware",
    "key, thread's next call",
    "decode of a hit",
)
FIRST = ("first key, ours", "first key, LangChain")
PARTS = ("first key's prompt digests", "first key's tools digest", "first key's head (model identity)")


def counted(fn: Callable[[int], object], n: int) -> None:
    """``fn(i)`` for ``i`` in ``range(n)``, each inside ``filterfalse``'s C iteration (the counted region), between
    two ``os.getppid()`` calls (the dumps)."""
    os.getppid()
    for _ in itertools.filterfalse(lambda i: fn(i) is _NEVER, range(n)):
        pass
    os.getppid()


_NEVER = object()


def steady(turns: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from langchain.agents import create_agent
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
    from langchain_core.caches import InMemoryCache
    from langchain_core.messages import AIMessage, HumanMessage
    from response_cache import conversation, tools

    from promptcache import InMemoryServerCache, ResponseCache
    from promptcache.response_cache._entry import decode_hit, encode_entry
    from promptcache.response_cache._keys import request_key
    from promptcache.testing import ScriptedChatModel

    class PassThrough(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(request)

    class Canned(AgentMiddleware):
        def __init__(self, reply: Any) -> None:
            super().__init__()
            self.reply = reply

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return ModelResponse(result=[self.reply])

    msgs, tls = conversation(), tools()
    history = msgs[1:-1]

    def agent(middleware: list[Any], **kw: Any) -> Any:
        model = ScriptedChatModel(replies=["The flight is confirmed."], cycle=True, usage=False, **kw)
        return create_agent(model, tools=tls, middleware=middleware)

    plain, passing = agent([]), agent([PassThrough()])
    cached = agent([ResponseCache(InMemoryServerCache())])
    lc_cached = agent([], cache=InMemoryCache())
    canned = agent([Canned(AIMessage("The flight is confirmed."))])

    def turn(a: Any, text: str) -> Any:
        return a.invoke({"messages": [*history, HumanMessage(text)]})

    model = ScriptedChatModel(replies=["ok"], cycle=True)
    requests = [
        ModelRequest(
            model=model, messages=[*history, HumanMessage(f"k{i}")], system_message=msgs[0], tools=tls, tool_choice=None
        )
        for i in range(10 + turns)
    ]
    entry = encode_entry(
        ModelResponse(result=[AIMessage("The flight is confirmed.", response_metadata={"model_name": "m"})])
    )
    variants: dict[str, Callable[[int], object]] = {
        "turn, no cache": lambda i: turn(plain, f"q{i}"),
        "turn, pass-through middleware": lambda i: turn(passing, f"p{i}"),
        "turn, ResponseCache miss": lambda i: turn(cached, f"m{i}"),
        "turn, ResponseCache hit": lambda i: turn(cached, "same question"),
        "turn, LangChain cache hit": lambda i: turn(lc_cached, "same question"),
        "turn, canned reply middleware": lambda i: turn(canned, "same question"),
        "key, thread's next call": lambda i: request_key(requests[i], "bench", "user-1"),
        "decode of a hit": lambda i: decode_hit(entry, "key"),
    }
    for name in STEADY:
        fn = variants[name]
        for i in range(-10, 0):
            fn(i + 10 if name.startswith("key") else i)
        gc.collect()
        counted((lambda i, f=fn: f(i + 10)) if name.startswith("key") else fn, turns)


def first_key(which: str) -> None:
    """As ``bench/response_cache.py``'s first-key child (tools converted before), the key in the counted region."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from langchain.agents.middleware import ModelRequest
    from langchain_core.load import dumps
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from response_cache import conversation, tools, warm_up_first_key

    from promptcache.response_cache._keys import request_key
    from promptcache.testing import ScriptedChatModel

    warm_up_first_key()
    msgs, tls, model = conversation(), tools(), ScriptedChatModel(replies=["ok"])
    formatted = [convert_to_openai_tool(t) for t in tls]  # bind_tools did this on an earlier call
    request = ModelRequest(model=model, messages=msgs[1:], system_message=msgs[0], tools=tls)
    if which == "first key, ours":
        counted(lambda i: request_key(request, "bench", "user-1"), 1)
    elif which == "parts":  # the three parts of our first key, one after the other, each counted alone
        from promptcache._message_digests import message_digests
        from promptcache.response_cache._keys import _request_head
        from promptcache.response_cache._tools_digest import tools_digest

        counted(lambda i: message_digests(msgs), 1)
        counted(lambda i: tools_digest(tls), 1)
        counted(lambda i: _request_head("bench", model), 1)
    else:
        counted(lambda i: (dumps(msgs), model._get_llm_string(tools=formatted)), 1)


def run(inner: str, turns: int) -> list[int]:
    """Counts of each counted region of one ``--inner`` child under callgrind, in order."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--collect-atstart=no",
                "--toggle-collect=filterfalse_next",
                "--dump-before=getppid",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--inner",
                inner,
                "--turns",
                str(turns),
            ],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        dumps = sorted(Path(tmp).glob("cg.out.*"), key=lambda p: int(p.suffix[1:]))
        totals = [int(re.search(r"^totals: (\d+)", p.read_text(), re.M).group(1)) for p in dumps]  # type: ignore[union-attr]
        return totals[1::2]  # the dump before each variant holds nothing counted; the one after, the variant


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=20, help="counted calls per steady-state variant")
    parser.add_argument("--inner", choices=("steady", *FIRST, "parts"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner == "steady":
        steady(args.turns)
        return
    if args.inner:
        first_key(args.inner)
        return
    per_call = {name: count / args.turns for name, count in zip(STEADY, run("steady", args.turns), strict=True)}
    for name in FIRST:
        per_call[name] = float(run(name, 1)[0])
    per_call.update(zip(PARTS, map(float, run("parts", 1)), strict=True))
    print(f"| variant | instructions per call (--turns {args.turns}) |")
    print("|---|---:|")
    for name, value in per_call.items():
        print(f"| {name} | {value / 1e3:,.1f} k |")
    floor = per_call["turn, pass-through middleware"]
    lc_hit = per_call["turn, LangChain cache hit"]
    print(f"miss over the pass-through turn: {per_call['turn, ResponseCache miss'] / floor - 1:+.1%}")
    print(f"hit / LangChain's cache hit: {per_call['turn, ResponseCache hit'] / lc_hit:.2f}x")
    print(f"canned reply / LangChain's cache hit: {per_call['turn, canned reply middleware'] / lc_hit:.2f}x")
    print(f"first key, ours / LangChain's: {per_call['first key, ours'] / per_call['first key, LangChain']:.2f}x")


if __name__ == "__main__":
    main()
