"""Benchmark: cache-point placement per request against langchain-aws' own placement, side by side in one run.

Both place points on the same final Converse request, through the hook langchain-aws calls once the request is
built (``_apply_cache_points(cache_control, system, bedrock_messages, params)``):

- ours: ``CachePointChatBedrockConverse`` (the default ``anchored-tail`` strategy, the default token counter,
  the in-memory placement store) on a growing conversation -- the stored placements, and the counts kept for the
  conversation (`promptcache.cache_points._prefix_counts`), are those the same conversation two messages shorter
  left, so each timed call counts the two messages it adds, as a conversation's next request does;
- langchain-aws: ``ChatBedrockConverse._apply_cache_points`` with ``cache_control={"ttl": "5m"}`` (system + last
  message + tools + the end-of-history point).

The request: a system prompt of ~1,500 tokens, 10 tool specs, and ``n`` messages of an agent loop (user text, then
assistant text + ``toolUse`` / user ``toolResult`` pairs, every text distinct). Each timed call gets fresh lists
(both placements modify them; copying is outside the timing). "warm": the texts were counted by an earlier request
(a conversation's later turns); "cold": the token memo and the kept counts cleared first (every text encoded).

Each round times both variants in a shuffled order (the fastest of ``--repeat`` calls each: the least disturbed by
other load on the machine) and takes their ratio; the
table gives the median and range of the ratios over ``--rounds`` rounds, and the per-message cost above the
fixed cost, (t(n) - t(smallest n)) / (n - smallest n). The garbage collector is off during each timed call (as
``timeit`` does), for both variants: with it on, a collection of the whole request triggered by either call's
allocations lands on a random call and swamps the comparison. After each of our calls the previous request that
its plan replaced is dropped outside the timing, as ``_generate`` / ``_stream`` drop it once the call returns (in
langchain-aws the request is freed when its call returns too, outside its placement).

    python bench/cache_points.py                     # sizes 200, 1000, 10000; 7 rounds
    python bench/cache_points.py --sizes 200 --rounds 5 --repeat 200
    python bench/cache_points.py --long-text         # long texts: the length estimate against a full encode
    python bench/cache_points.py --breakdown 200 --repeat 300   # each step of ours timed alone
    python bench/cache_points.py --breakdown 10000 --repeat 9 --cold-caches   # the same, caches evicted first
    python bench/cache_points.py --floor --rounds 5  # reading the request: our comparison vs langchain-aws' walk
    python bench/cache_points.py --instructions      # instructions per request (valgrind callgrind), both variants

``--instructions`` counts instructions instead of time (they do not move with the machine's load): it runs this
script once under ``valgrind --tool=callgrind``, which collects only while each measured request is placed (inside
a ``functools.reduce`` call per request, dumped alone), the requests being made and the state reset as for the
timing; it reports the median per request of each variant. Needs ``valgrind`` on PATH.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import boto3
from langchain_aws import ChatBedrockConverse

from promptcache.cache_points._prefix_counts import CountedMessages
from promptcache.cache_points._tokens import clear_token_memo, count_text_tokens, default_count_tokens
from promptcache.integrations.bedrock import CachePointChatBedrockConverse, conversation_id

MODEL = "us.anthropic.claude-sonnet-4-20250514-v1:0"
#: Bytes `breakdown` copies to evict the caches: 64 MiB, twice the 32 MiB L3 cache of the machine bench/README.md's
#: figures come from (``lscpu``: AMD EPYC, 2 cores); a capacity, not fitted.
_EVICT_BYTES = 64 << 20
WORDS = (
    "model cache token prompt bedrock request message system layer network gradient training data "
    "vector search answer question example context window latency cost flight booking refund"
).split()


def _text(rng: random.Random, i: int, lo: int, hi: int) -> str:
    return f"m{i} " + " ".join(rng.choices(WORDS, k=rng.randint(lo, hi)))


def request(n: int, seed: int = 7) -> tuple[list[Any], list[dict[str, Any]], list[Any]]:
    """(system, messages, tools) of an ``n``-message agent conversation ending on a user message."""
    rng = random.Random(seed)
    system = [{"text": "You are a careful airline support agent. " + _text(rng, -1, 1_100, 1_100)}]
    tools = [
        {
            "toolSpec": {
                "name": f"tool_{k}",
                "description": _text(rng, -2 - k, 20, 40),
                "inputSchema": {"json": {"type": "object", "properties": {"q": {"type": "string"}}}},
            }
        }
        for k in range(10)
    ]
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": _text(rng, 0, 10, 120)}]}]
    for i in range(1, n):
        if i % 2:
            use = {"toolUse": {"toolUseId": f"t{i}", "name": "tool_1", "input": {"q": _text(rng, i, 2, 6)}}}
            messages.append({"role": "assistant", "content": [{"text": _text(rng, i, 10, 60)}, use]})
        else:
            result = {"toolResult": {"toolUseId": f"t{i - 1}", "content": [{"text": _text(rng, i, 20, 200)}]}}
            messages.append({"role": "user", "content": [result]})
    return system, messages, tools


def fresh(system: list[Any], messages: list[dict[str, Any]], tools: list[Any]) -> tuple[Any, Any, Any]:
    """New lists (blocks shared), as langchain-aws builds them for every call."""
    return (
        list(system),
        [{"role": m["role"], "content": list(m["content"])} for m in messages],
        {"toolConfig": {"tools": list(tools)}},
    )


def _client() -> Any:
    return boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


def _drop_retired(model: CachePointChatBedrockConverse) -> None:
    """Drop the previous request that the last call's plan replaced, as ``_generate`` / ``_stream`` do once the call
    returns (a version without that slot frees it inside the next call)."""
    state = model._hot
    if hasattr(state, "retired"):
        state.retired = None


class Variants:
    """Both placements for one request size, ready to time."""

    def __init__(self, n: int) -> None:
        client = _client()
        self.ours = CachePointChatBedrockConverse(model=MODEL, client=client, region_name="us-east-1")
        self.theirs = ChatBedrockConverse(model=MODEL, client=client, region_name="us-east-1")
        self.request = request(n)
        system, messages, tools = self.request
        # the previous request of the conversation: two messages shorter
        s, m, p = fresh(system, messages[:-2], tools)
        self.ours._apply_cache_points(None, s, m, p)
        self.conv = conversation_id(system, messages)
        self.model_key = self.ours.cache_model.model_id
        self.previous = self.ours._store.load(self.conv, self.model_key)
        self.counts = self.ours._hot.counts.get(self.conv)  # the counts that request left for the next one

    def previous_counts(self) -> CountedMessages:
        """A copy of the counts the previous request left (its own lists): the next request of a conversation appends
        to those lists instead of copying them (`CountedMessages.take`), once, so each timed call gets its own."""
        counts = self.counts
        assert counts is not None and counts.kept is not None
        copy = CountedMessages(None, list(counts.ends), list(counts.tokens), list(counts.kept), counts.first_str)
        copy.fingerprints = dict(counts.fingerprints)
        return copy

    def time_ours(self, repeat: int, cold: bool = False) -> float:
        samples = []
        for _ in range(repeat):
            args = fresh(*self.request)
            self.ours._store.save(self.conv, self.model_key, self.previous)
            self.ours._hot.counts.put(self.conv, None if cold else self.previous_counts())
            if cold:
                clear_token_memo()
            gc.disable()
            start = time.perf_counter_ns()
            self.ours._apply_cache_points(None, *args)
            samples.append(time.perf_counter_ns() - start)
            _drop_retired(self.ours)
            gc.enable()
        return min(samples) / 1e6

    def time_theirs(self, repeat: int) -> float:
        samples = []
        for _ in range(repeat):
            args = fresh(*self.request)
            gc.disable()
            start = time.perf_counter_ns()
            self.theirs._apply_cache_points({"ttl": "5m"}, *args)
            samples.append(time.perf_counter_ns() - start)
            gc.enable()
        return min(samples) / 1e6


def run(sizes: list[int], rounds: int, repeat: int) -> None:
    variants = {n: Variants(n) for n in sizes}
    for v in variants.values():  # warm: every text counted once, both code paths run once
        v.time_ours(3)
        v.time_theirs(3)
    ours: dict[int, list[float]] = {n: [] for n in sizes}
    theirs: dict[int, list[float]] = {n: [] for n in sizes}
    rng = random.Random(1)
    for _ in range(rounds):
        jobs = [(n, which) for n in sizes for which in ("ours", "theirs")]
        rng.shuffle(jobs)
        for n, which in jobs:
            reps = max(5, repeat * sizes[0] // n)
            if which == "ours":
                ours[n].append(variants[n].time_ours(reps))
            else:
                theirs[n].append(variants[n].time_theirs(reps))
    cold = {n: variants[n].time_ours(3, cold=True) for n in sizes}
    base = sizes[0]
    print(
        "| messages | ours warm (ms) | langchain-aws (ms) | ratio median (range) | per message above the "
        f"{base:,}-message cost, ours / langchain-aws (us) | ours cold (ms) |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        ratios = sorted(o / t for o, t in zip(ours[n], theirs[n]))
        o, t = statistics.median(ours[n]), statistics.median(theirs[n])
        slope = ""
        if n != base:
            o_base, t_base = statistics.median(ours[base]), statistics.median(theirs[base])
            slope = f"{(o - o_base) * 1e3 / (n - base):.2f} / {(t - t_base) * 1e3 / (n - base):.2f}"
        print(
            f"| {n:,} | {o:.3f} | {t:.3f} | {statistics.median(ratios):.2f}x ({ratios[0]:.2f}-{ratios[-1]:.2f}) "
            f"| {slope} | {cold[n]:.1f} |"
        )


def breakdown(n: int, repeat: int, cold_caches: bool = False) -> None:
    """Where our time goes at ``n`` messages: each step timed alone on the same request (fastest of ``repeat``
    calls, the stored placements and kept counts reset before each), next to langchain-aws' whole placement.

    ``cold_caches``: before each timed call, a 64 MiB buffer is copied (`_EVICT_BYTES`, twice the L3 cache of the
    machine measured), so each step reads the request from memory, as a step of the whole hook
    does once the earlier steps' walks over a large request have pushed it out of the caches. The last rows time
    one copy of a per-message list each (the copies a request makes of the message list and of the kept counts)."""
    from promptcache.cache_points._converse import _specs_tokens, place_cache_points
    from promptcache.cache_points._prefix_counts import serialise
    from promptcache.cache_points._request_scan import scan_request

    v = Variants(n)
    v.time_ours(3)
    hot, info = v.ours._hot, v.ours._info
    evict = bytearray(_EVICT_BYTES if cold_caches else 0)
    kept, reused = v.counts.kept or [], len(v.counts.kept or [])
    now = {"counts": v.counts}  # the previous request's counts, a copy per call (`Variants.previous_counts`)

    def best(step: Any) -> float:
        samples = []
        for _ in range(repeat):
            system, messages, params = fresh(*v.request)
            v.ours._store.save(v.conv, v.model_key, v.previous)
            now["counts"] = v.previous_counts()
            hot.counts.put(v.conv, now["counts"])
            bytes(evict)  # reads and writes the buffer (nothing when the caches are not evicted)
            gc.disable()
            start = time.perf_counter_ns()
            step(system, messages, params["toolConfig"]["tools"], params)
            samples.append(time.perf_counter_ns() - start)
            _drop_retired(v.ours)
            gc.enable()
        return min(samples) / 1e3

    def place(s: Any, m: Any, t: Any, p: Any) -> None:
        place_cache_points(
            info, s, m, t, previous_placements=v.previous, strategy=hot.strategy, previous_counts=now["counts"]
        )

    steps = {
        "ours, the whole hook": lambda s, m, t, p: v.ours._apply_cache_points(None, s, m, p),
        "conversation id": lambda s, m, t, p: conversation_id(s, m),
        "placement store read": lambda s, m, t, p: hot.store.load(v.conv, v.model_key),
        "placement store write": lambda s, m, t, p: hot.store.save(v.conv, v.model_key, v.previous),
        "place_cache_points": place,
        "place_cache_points: the walk (scan_request)": lambda s, m, t, p: scan_request(
            info, s, m, t, count_tokens=True, previous=now["counts"]
        ),
        "the walk: the messages compared with the kept copy (reusable)": lambda s, m, t, p: v.counts.reusable(m),
        "(not on the path) the messages' JSON (serialise)": lambda s, m, t, p: serialise(m),
        "place_cache_points: the tool specs' tokens": lambda s, m, t, p: _specs_tokens(t),
        "reading one pydantic private attribute of the model (model._store)": lambda s, m, t, p: v.ours._store,
        "langchain-aws, the whole hook": lambda s, m, t, p: v.theirs._apply_cache_points({"ttl": "5m"}, s, m, p),
        "one copy: the message list (list(messages))": lambda s, m, t, p: list(m),
        "two copies: the message list copied and written back (messages[:] = list(messages))": lambda s, m, t, p: (
            m.__setitem__(slice(None), list(m))
        ),
        "one copy: the kept messages (kept[:n])": lambda s, m, t, p: kept[:reused],
        "one copy: the kept counts (tokens[:n])": lambda s, m, t, p: v.counts.tokens[:reused],
        "one copy: the kept JSON ends (ends[:n])": lambda s, m, t, p: v.counts.ends[:reused],
    }
    print(f"| step ({n:,} messages{', caches evicted' if cold_caches else ''}) | fastest of {repeat} (us) |")
    print("|---|---:|")
    for label, step in steps.items():
        print(f"| {label} | {best(step):.1f} |")


def floor(sizes: list[int], rounds: int, repeat: int) -> None:
    """What reading the request costs, per size: the comparison of the messages with the previous request's kept copy
    that our placement makes (to prove the conversation's prefix unchanged), the orjson serialisation it made before
    (every text byte), langchain-aws' whole placement (it reads every block's keys, no text), and a bare loop over
    every block; shuffled, fastest of ``repeat`` calls, median over ``rounds`` rounds, with the cost per message above
    the smallest size."""
    from promptcache.cache_points._prefix_counts import serialise

    variants = {n: Variants(n) for n in sizes}

    def touch(messages: list[dict[str, object]]) -> None:
        for message in messages:
            for block in message["content"]:  # type: ignore[attr-defined]
                "cachePoint" in block  # noqa: B015 - the read is the point

    def best(v: Variants, step: Any, reps: int) -> float:
        samples = []
        for _ in range(reps):
            system, messages, params = fresh(*v.request)
            gc.disable()
            start = time.perf_counter_ns()
            step(v, system, messages, params)
            samples.append(time.perf_counter_ns() - start)
            gc.enable()
        return min(samples) / 1e6

    steps: dict[str, Any] = {
        "ours, the whole hook": lambda v, s, m, p: v.time_ours(1),
        "compare with the kept copy (==)": lambda v, s, m, p: v.counts.reusable(m),
        "serialise (orjson, every byte)": lambda v, s, m, p: serialise(m),
        "langchain-aws, the whole hook": lambda v, s, m, p: v.theirs._apply_cache_points({"ttl": "5m"}, s, m, p),
        "a loop over every block": lambda v, s, m, p: touch(m),
    }
    times: dict[tuple[str, int], list[float]] = {(k, n): [] for k in steps for n in sizes}
    rng = random.Random(2)
    for _ in range(rounds):
        jobs = [(k, n) for k in steps for n in sizes]
        rng.shuffle(jobs)
        for k, n in jobs:
            reps = max(5, repeat * sizes[0] // n)
            if k == "ours, the whole hook":
                times[k, n].append(variants[n].time_ours(reps))
            else:
                times[k, n].append(best(variants[n], steps[k], reps))
    base = sizes[0]
    print("| step | " + " | ".join(f"{n:,} messages (ms)" for n in sizes) + f" | per message above {base:,} (us) |")
    print("|---|" + "---:|" * (len(sizes) + 1))
    for k in steps:
        med = [statistics.median(times[k, n]) for n in sizes]
        slopes = " / ".join(f"{(m - med[0]) * 1e3 / (n - base):.2f}" for m, n in zip(med[1:], sizes[1:]))
        print(f"| {k} | " + " | ".join(f"{m:.3f}" for m in med) + f" | {slopes} |")


def long_text() -> None:
    """Long texts: the estimate (above ``LONG_TEXT_CHARS``) against encoding the whole text, time and tokens."""
    from promptcache.cache_points._tokens import LONG_TEXT_CHARS, _encode_count

    rng = random.Random(3)
    print(f"LONG_TEXT_CHARS = {LONG_TEXT_CHARS:,}")
    print("| text | chars | estimate (tokens) | estimate (ms) | full encode (tokens) | full encode (ms) | error |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    cases = [
        ("letters, no whitespace", "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=2_000_000))),
        (
            "base64-like, no whitespace",
            "".join(rng.choices("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/", k=2_000_000)),
        ),
        ("prose", " ".join(rng.choices(WORDS, k=330_000))[:2_000_000]),
        ("prose", " ".join(rng.choices(WORDS, k=3_300))[:20_000]),
    ]
    for label, text in cases:
        clear_token_memo()
        start = time.perf_counter()
        estimate = count_text_tokens(text)
        t_est = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        exact = _encode_count(text)
        t_exact = (time.perf_counter() - start) * 1e3
        print(
            f"| {label} | {len(text):,} | {estimate:,} | {t_est:.1f} | {exact:,} | {t_exact:.0f} | "
            f"{(estimate - exact) / exact:+.1%} |"
        )


def exact_cost() -> None:
    """Encoding time of texts without whitespace by length: where ``LONG_TEXT_CHARS`` sits."""
    from promptcache.cache_points._tokens import _encode_count

    rng = random.Random(5)
    print("| chars (letters, no whitespace) | encode (ms) |")
    print("|---:|---:|")
    for size in (1_024, 4_096, 8_192, 16_384, 65_536):
        text = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=size))
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            _encode_count(text)
            samples.append((time.perf_counter() - start) * 1e3)
        print(f"| {size:,} | {min(samples):.2f} |")


def _instructions_inner(sizes: list[int], calls: int) -> None:
    """The body of the valgrind run: at each size, ``calls`` requests per variant (fewer at larger sizes), each
    placed inside its own ``functools.reduce`` call (what callgrind collects and dumps, see `instructions`); the
    requests, the stored placements and the kept counts are made and reset outside it."""
    import functools

    gc.disable()
    for n in sizes:
        v = Variants(n)
        v.time_ours(3)
        v.time_theirs(3)
        for which in ("ours", "theirs"):
            for _ in range(max(3, calls * sizes[0] // n)):
                system, messages, params = fresh(*v.request)
                _drop_retired(v.ours)
                v.ours._store.save(v.conv, v.model_key, v.previous)
                v.ours._hot.counts.put(v.conv, v.previous_counts())
                if which == "ours":
                    functools.reduce(lambda _, __: v.ours._apply_cache_points(None, system, messages, params), [0], 0)
                else:
                    control = {"ttl": "5m"}
                    functools.reduce(
                        lambda _, __: v.theirs._apply_cache_points(control, system, messages, params), [0], 0
                    )
                print(f"call\t{n}\t{which}", flush=True)


def instructions(sizes: list[int], calls: int) -> None:
    """Instructions per request of each variant at each size (valgrind callgrind): collected only inside
    ``functools.reduce`` and dumped after each of its calls, so each measured request is one dump; the last dumps
    are the measured requests (the libraries' own ``reduce`` calls at import come first). Median per variant."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no"]
        command += ["--toggle-collect=functools_reduce", "--dump-after=functools_reduce"]
        command += [sys.executable, __file__, "--inner", ",".join(map(str, sizes)), "--calls", str(calls)]
        run = subprocess.run(command, capture_output=True, text=True, check=True)
        labels = [tuple(line.split("\t")[1:]) for line in run.stdout.splitlines() if line.startswith("call\t")]
        dumps = sorted(
            (name for name in os.listdir(tmp) if name.rsplit(".", 1)[-1].isdigit()),
            key=lambda name: int(name.rsplit(".", 1)[-1]),
        )[-len(labels) :]
        totals = []
        for name in dumps:
            with open(os.path.join(tmp, name)) as handle:
                found = re.search(r"^(?:summary|totals): (\d+)", handle.read(), re.M)
            totals.append(int(found.group(1)) if found else 0)
    per: dict[tuple[str, str], list[int]] = {}
    for label, total in zip(labels, totals):
        per.setdefault(label, []).append(total)  # type: ignore[arg-type]
    print("| messages | ours (instructions per request) | langchain-aws | ratio | requests per variant |")
    print("|---:|---:|---:|---:|---:|")
    med = {key: statistics.median(values) for key, values in per.items()}
    for n in sizes:
        o, t = med[str(n), "ours"], med[str(n), "theirs"]
        print(f"| {n:,} | {o:,.0f} | {t:,.0f} | {o / t:.2f}x | {len(per[str(n), 'ours'])} |")
    base = sizes[0]
    for n in sizes[1:]:
        slope = [(med[str(n), w] - med[str(base), w]) / (n - base) for w in ("ours", "theirs")]
        print(f"per message from {base:,} to {n:,}: ours {slope[0]:,.0f}, langchain-aws {slope[1]:,.0f} instructions")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="200,1000,10000")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=100, help="calls per variant per round at the smallest size")
    parser.add_argument("--long-text", action="store_true")
    parser.add_argument("--breakdown", type=int, metavar="N", help="time each step of ours alone at N messages")
    parser.add_argument("--cold-caches", action="store_true", help="--breakdown: evict the caches before each call")
    parser.add_argument("--floor", action="store_true", help="what reading the request costs, per size")
    parser.add_argument("--instructions", action="store_true", help="instructions per request (valgrind)")
    parser.add_argument("--calls", type=int, default=40, help="--instructions: requests at the smallest size")
    parser.add_argument("--inner", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        _instructions_inner([int(n) for n in args.inner.split(",")], args.calls)
        return
    default_count_tokens({"role": "user", "content": "warm up the encoding"})
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    try:
        _main(args)
    finally:
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _main(args: argparse.Namespace) -> None:
    if args.breakdown:
        breakdown(args.breakdown, args.repeat, args.cold_caches)
        return
    if args.long_text:
        exact_cost()
        long_text()
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.floor:
        floor(sizes, args.rounds, args.repeat)
        return
    if args.instructions:
        instructions(sizes if args.sizes != "200,1000,10000" else [200, 10_000], args.calls)
        return
    run(sizes, args.rounds, args.repeat)


if __name__ == "__main__":
    main()
