"""The replay: read files, build requests, run every strategy through its own simulator, count repeats.

``run_replay(paths, model_id, ...)`` returns a ``ReplayResult``; ``promptcache.replay.report`` renders it (terminal
table, JSON) and ``promptcache.replay.chart`` draws it. No network, no AWS account, no services.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .models import CacheRules, cache_rules
from .prepare import check_gap_s, prepare, requests_of, schedule
from .pricing import ModelPrice, price_for
from .readers import read_conversations
from .repeats import IntentionStats, RepeatCounter, ResponseCacheStats
from .simulator import PromptCacheSimulator
from .strategies import StrategyUnavailable, check_strategy_names, make_strategy
from .tokens import TokenCounter

__all__ = ["DEFAULT_STRATEGIES", "COMBINED", "ReplayResult", "StrategyTotals", "run_replay"]

DEFAULT_STRATEGIES = ("none", "last-message", "langchain-aws", "multi-point", "anchored-tail")
#: The product row: our placement with the ResponseCache in front (hits never reach Bedrock).
COMBINED = "anchored-tail+response-cache"
DEFAULT_GAP_S = 10.0


@dataclass
class StrategyTotals:
    """One strategy's bill over the replay. Token counts are tokens; costs USD (input side: input+read+write)."""

    name: str
    description: str = ""
    requests: int = 0
    model_calls: int = 0
    input_tokens: int = 0
    read_tokens: int = 0
    write_tokens: int = 0
    write_1h_tokens: int = 0
    requests_with_read: int = 0
    cost_usd: float = 0.0
    output_cost_usd: float = 0.0
    cumulative_usd: list[float] = field(default_factory=list)
    unavailable: str | None = None

    @property
    def read_share(self) -> float:
        return self.requests_with_read / self.requests if self.requests else 0.0


@dataclass
class ReplayResult:
    """Everything a report needs. ``strategies`` keeps the requested order; ``relative(name)`` is cost / none."""

    model_id: str
    files: list[str]
    conversations: int
    requests: int
    input_tokens: int
    output_tokens: int
    gap_s: float
    rules: CacheRules
    price: ModelPrice
    strategies: dict[str, StrategyTotals]
    response_cache: ResponseCacheStats
    intention: IntentionStats
    seconds: float = 0.0
    largest_request_tokens: int = 0
    untimed_requests: int = 0  # requests spaced by ``gap_s`` (no recorded timestamp)

    def relative(self, name: str) -> float | None:
        """Cost of ``name`` divided by the cost of ``none`` (``None`` when either is missing or zero)."""
        base = self.strategies.get("none")
        row = self.strategies.get(name)
        if base is None or row is None or row.unavailable or not base.cost_usd:
            return None
        return row.cost_usd / base.cost_usd

    def best(self) -> str | None:
        """The available placement strategy (not the combined row) with the lowest cost."""
        rows = [r for r in self.strategies.values() if not r.unavailable and r.name != COMBINED]
        return min(rows, key=lambda r: r.cost_usd).name if rows else None


def run_replay(
    paths: Sequence[str | Path],
    model_id: str,
    strategies: Iterable[str] = DEFAULT_STRATEGIES,
    gap_s: float = DEFAULT_GAP_S,
    combined: bool = True,
    progress: Callable[[int, int], None] | None = None,
    response_cache_ttl_s: float | None = None,
) -> ReplayResult:
    """Replay the conversations of ``paths`` against ``model_id``.

    Args:
        paths: JSON/JSONL transcript files (see ``promptcache.replay.readers``).
        model_id: a Bedrock model id (regional prefixes and ARNs resolve); sets cache rules and prices.
        strategies: names from ``promptcache.replay.strategies.STRATEGIES``; ``none`` is always added (the baseline).
        gap_s: seconds between requests without recorded timestamps (>= 0).
        combined: also bill ``anchored-tail`` behind the ResponseCache (row ``COMBINED``) when ``anchored-tail`` is
            among ``strategies``.
        progress: called as ``progress(done, total)`` after each request.
        response_cache_ttl_s: lifetime of a ResponseCache entry on the replay clock, seconds (> 0; default
            ``DEFAULT_RESPONSE_CACHE_TTL_SECONDS``, the ResponseCache's own default). Sets which repeats count as
            hits and what the ``COMBINED`` row skips.

    Raises:
        TranscriptError: unreadable or malformed input.
        KeyError: unknown model (no price) or strategy name (both checked before any file is read).
        ValueError: bad ``gap_s`` or ``response_cache_ttl_s`` (checked before any file is read), or no request in
            the files.
    """
    started = time.perf_counter()
    if response_cache_ttl_s is not None and not (0 < response_cache_ttl_s < float("inf")):
        raise ValueError(f"the ResponseCache TTL must be a finite number of seconds > 0, got {response_cache_ttl_s!r}")
    check_gap_s(gap_s)
    price = price_for(model_id)
    rules = cache_rules(model_id)
    names = list(dict.fromkeys(["none", *strategies]))
    check_strategy_names(names)  # before the (possibly long) reading
    conversations = read_conversations(paths)
    counter = TokenCounter()
    counter.prime(b.text for c in conversations for m in c.messages for b in m.blocks)
    counter.prime(b.text for c in conversations for b in c.system)
    prepared = [prepare(c, counter) for c in conversations]
    requests = schedule([requests_of(p, counter) for p in prepared], gap_s)
    if not requests:
        raise ValueError(
            f"nothing to replay in {', '.join(str(p) for p in paths)}: {len(conversations)} "
            "conversation(s) but no request (a request is an assistant reply that follows at least one "
            "message)"
        )

    runners = {}
    totals: dict[str, StrategyTotals] = {}
    for name in names:
        try:
            strategy = make_strategy(name, rules, price)
        except StrategyUnavailable as exc:
            totals[name] = StrategyTotals(name, unavailable=str(exc))
            continue
        totals[name] = StrategyTotals(name, strategy.description)
        runners[name] = (strategy, PromptCacheSimulator(rules, price))
    combined = combined and "anchored-tail" in runners
    if combined:
        totals[COMBINED] = StrategyTotals(COMBINED, "anchored-tail, with the ResponseCache answering exact repeats")
        combined_runner = (make_strategy("anchored-tail", rules, price), PromptCacheSimulator(rules, price))

    repeats = RepeatCounter(model_id, response_cache_ttl_s)
    output_price = price.output / 1_000_000
    for done, request in enumerate(requests, start=1):
        out_cost = request.output_tokens * output_price
        hit = repeats.feed(request)
        cum, hashes, n = request.prepared.cum, request.prepared.hashes, request.n_blocks
        for name, (strategy, simulator) in runners.items():
            _account(
                totals[name], simulator.simulate(cum, hashes, n, strategy.place(request), request.time_s), out_cost
            )
        if combined:
            row = totals[COMBINED]
            if hit:  # answered from the ResponseCache: no Bedrock call, nothing billed
                row.requests += 1
                row.cumulative_usd.append(row.cost_usd)
            else:
                strategy, simulator = combined_runner
                _account(row, simulator.simulate(cum, hashes, n, strategy.place(request), request.time_s), out_cost)
        if progress is not None:
            progress(done, len(requests))

    return ReplayResult(
        model_id=model_id,
        files=[str(p) for p in paths],
        conversations=len(conversations),
        requests=len(requests),
        input_tokens=sum(r.input_tokens for r in requests),
        output_tokens=sum(r.output_tokens for r in requests),
        gap_s=gap_s,
        rules=rules,
        price=price,
        strategies=totals,
        response_cache=repeats.response,
        intention=repeats.intention,
        seconds=time.perf_counter() - started,
        largest_request_tokens=max(r.input_tokens for r in requests),
        untimed_requests=sum(not r.timed for r in requests),
    )


def _account(row: StrategyTotals, cost, out_cost: float) -> None:  # type: ignore[no-untyped-def]
    row.requests += 1
    row.model_calls += 1
    row.input_tokens += cost.input_tokens
    row.read_tokens += cost.read_tokens
    row.write_tokens += cost.write_tokens
    row.write_1h_tokens += cost.write_1h_tokens
    row.requests_with_read += cost.cache_hit
    row.cost_usd += cost.cost_usd
    row.output_cost_usd += out_cost
    row.cumulative_usd.append(row.cost_usd)
