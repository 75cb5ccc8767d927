"""The replay: read files, build requests, run every strategy through its own simulator, count repeats.

``run_replay(paths, model_id, ...)`` returns a ``ReplayResult``; ``promptcache.replay._report`` renders it (terminal
table, JSON) and ``promptcache.replay._chart`` draws it. No network, no AWS account, no services.

Conversations stream: each is read, counted, replayed and released before memory grows with the next
(``promptcache.replay._stream``). Each call is priced and cached under its own model (the reply's ``Message.model``,
else ``model_id``; ``force_model`` prices every call as ``model_id``): one simulator per strategy and model, since
models do not share a cache. Where the log records usage, every strategy runs on the logged prompt sizes
(``promptcache.replay._sizes``), the logged bill and the ``as-logged`` strategy are added, and the fidelity figure
compares them (``promptcache.replay._as_logged``); elsewhere sizes are estimated (``promptcache.replay._tokens``,
calibrated for Claude when the model is a Claude model). Comparisons with the log cover the logged requests only:
each row keeps its cost on them (``StrategyTotals.logged_cost_usd``), the ``as-logged`` row counts only them, and
``ReplayResult.billed_mismatch`` says when ``force_model`` makes the bill incomparable.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from promptcache._pricing import ModelPrice, base_model_id

from ._as_logged import Fidelity, LoggedTotals
from ._model_table import ModelTable
from ._models import CacheRules
from ._openai_cache import OpenAIPrefixCache
from ._prepare import Request, assign_times, check_gap_s, prepare, requests_of
from ._repeats import IntentionStats, RepeatCounter, ResponseCacheStats
from ._simulator import PromptCacheSimulator, RequestCost, make_simulator
from ._sizes import split_on_prefix_change
from ._strategies import Strategy, StrategyUnavailable, check_strategy_names, make_strategy
from ._stream import TimeOrder, iter_conversations
from ._tokens import CLAUDE, RAW, TokenCounter, calibration_for

__all__ = ["DEFAULT_STRATEGIES", "COMBINED", "ReplayResult", "StrategyTotals", "run_replay"]

DEFAULT_STRATEGIES = ("none", "last-message", "langchain-aws", "multi-point", "anchored-tail")
#: The product row: our placement with the ResponseCache in front (hits never reach Bedrock).
COMBINED = "anchored-tail+response-cache"
DEFAULT_GAP_S = 10.0
AS_LOGGED = "as-logged"
#: ``ReplayResult.output_tokens_note`` for a log with Claude Code usage.
CLAUDE_CODE_OUTPUT_NOTE = (
    "streaming snapshot: Claude Code logs output_tokens while the reply streams, often under half of the final "
    "count; output figures from this log are lower bounds"
)
_NOT_PLACEMENTS = frozenset({COMBINED, AS_LOGGED, "hindsight"})


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
    #: input-side USD over the requests that carry logged usage only (the like-for-like figure against the bill)
    logged_cost_usd: float = 0.0
    #: whether the row covers only the requests with logged usage (``as-logged``: the log's layout is known there)
    logged_only: bool = False

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
    models: dict[str, int] = field(default_factory=dict)  # model id -> calls priced with it
    token_estimate: str = "cl100k"  # the calibration of estimated sizes (``promptcache.replay._tokens``)
    logged_requests: int = 0  # requests simulated on logged prompt sizes (the rest are estimated)
    logged: LoggedTotals | None = None  # the log's own bill (``None``: no usage in the log)
    fidelity: Fidelity | None = None  # simulated as-logged vs the log
    late_conversations: int = 0  # conversations that started before already-replayed requests (replayed late)
    forced_model: str | None = None  # the ``--model`` id when it forced every call's model
    logged_models: dict[str, int] = field(default_factory=dict)  # model the log billed -> calls with usage
    price_source: str = "https://aws.amazon.com/bedrock/pricing/"  # where ``price`` came from
    #: where the ``as-logged`` row's figures come from: ``"logged"`` (the log's usage: sizes, TTLs, breakpoints),
    #: ``"predicted"`` (no usage: the client's placement rules on estimated sizes), ``"mixed"``, or ``None``
    as_logged_source: str | None = None
    #: why the output-token figures are not exact, or ``None``: Claude Code writes each reply's ``usage`` while it
    #: streams, so its logged ``output_tokens`` is a snapshot taken before the reply ended (often under half of it)
    output_tokens_note: str | None = None

    def relative(self, name: str) -> float | None:
        """Cost of ``name`` divided by the cost of ``none`` (``None`` when either is missing or zero); a row that
        covers only the logged requests (``logged_only``) is divided by ``none`` on those requests."""
        base = self.strategies.get("none")
        row = self.strategies.get(name)
        if base is None or row is None or row.unavailable:
            return None
        base_usd = base.logged_cost_usd if row.logged_only else base.cost_usd
        return row.cost_usd / base_usd if base_usd else None

    def billed_mismatch(self) -> str | None:
        """Why the log's bill cannot be compared with the simulated rows, or ``None`` when it can: ``--model``
        forced a model other than the one(s) the log was billed for (prices and cache rules differ)."""
        if self.forced_model is None or not self.logged_models:
            return None
        forced = base_model_id(self.forced_model)
        others = [m for m in self.logged_models if base_model_id(m) != forced]
        if not others:
            return None
        return f"--model forces {self.forced_model} while the log was billed for {', '.join(sorted(others))}"

    def best(self) -> str | None:
        """The available placement strategy (not the combined row, nor the references ``as-logged`` and
        ``hindsight``) with the lowest cost."""
        rows = [r for r in self.strategies.values() if not r.unavailable and r.name not in _NOT_PLACEMENTS]
        return min(rows, key=lambda r: r.cost_usd).name if rows else None


def run_replay(
    paths: Sequence[str | Path],
    model_id: str,
    strategies: Iterable[str] = DEFAULT_STRATEGIES,
    gap_s: float = DEFAULT_GAP_S,
    combined: bool = True,
    progress: Callable[[int, int | None], None] | None = None,
    response_cache_ttl_s: float | None = None,
    *,
    force_model: bool = False,
    models: ModelTable | None = None,
    tokens: str | None = None,
) -> ReplayResult:
    """Replay the conversations of ``paths``.

    Args:
        paths: JSON/JSONL transcript files (see ``promptcache.replay._readers``).
        model_id: the model of calls whose log names none (all calls with ``force_model``); a Bedrock model id
            (regional prefixes and ARNs resolve) or an Anthropic API id (``claude-opus-4-6``).
        strategies: names from ``promptcache.replay._strategies.STRATEGIES``; ``none`` is always added (the baseline),
            and ``as-logged`` when the log records usage.
        gap_s: seconds between requests without recorded timestamps (>= 0).
        combined: also bill ``anchored-tail`` behind the ResponseCache (row ``COMBINED``) when ``anchored-tail`` is
            among ``strategies``.
        progress: called as ``progress(done, None)`` after each request (the total is unknown while streaming).
        response_cache_ttl_s: lifetime of a ResponseCache entry on the replay clock, seconds (> 0; default
            ``DEFAULT_RESPONSE_CACHE_TTL_SECONDS``).
        force_model: price and cache every call as ``model_id`` (the ``--model`` override).
        models: cache rules and prices, with any user overrides (default: the shipped tables).
        tokens: ``"claude"`` (calibrated estimate) or ``"cl100k"`` (plain ``cl100k_base``) for sizes the log does
            not record; default ``"claude"`` for a Claude ``model_id``, else ``"cl100k"``.

    Raises:
        TranscriptError: unreadable or malformed input. KeyError: unknown model (no price) or strategy name
        (checked before any file is read for ``model_id``; for a model named in the log, when it is reached).
        ValueError: bad ``gap_s``, ``response_cache_ttl_s`` or ``tokens`` (checked before any file is read), or no
        request in the files.
    """
    started = time.perf_counter()
    if response_cache_ttl_s is not None and not (0 < response_cache_ttl_s < float("inf")):
        raise ValueError(f"the ResponseCache TTL must be a finite number of seconds > 0, got {response_cache_ttl_s!r}")
    check_gap_s(gap_s)
    table = models or ModelTable()
    table.price(model_id)  # unknown default model: KeyError before reading
    default_rules = table.rules(model_id)
    if tokens not in (None, "claude", "cl100k"):
        raise ValueError(f"tokens must be 'claude' or 'cl100k', got {tokens!r}")
    calibration = (
        calibration_for(model_id, default_rules.family) if tokens is None else (CLAUDE if tokens == "claude" else RAW)
    )
    names = list(dict.fromkeys(["none", *strategies]))
    check_strategy_names(names)
    run = _Run(names, table, combined and "anchored-tail" in names, response_cache_ttl_s, model_id, force_model)
    counter = TokenCounter(calibration)
    order = TimeOrder()
    clock_end = 0.0
    conversations = 0
    for conv in iter_conversations(paths):
        conversations += 1
        counter.prime(b.text for m in conv.messages for b in m.blocks)
        counter.prime(b.text for b in conv.system)
        conv_counter = counter
        if tokens is None and calibration is not RAW and not force_model:  # each Claude model's own tokenizer
            conv_counter = counter.calibrated(calibration_for(_conversation_model(conv) or model_id))
        parts = [conv]
        if conv.meta.get("hidden_prefix") is True:
            parts = split_on_prefix_change(conv, [sum(conv_counter.block(b) for b in m.blocks) for m in conv.messages])
        reqs = []
        for part in parts:  # the parts of one conversation enter the time order together
            part_reqs = requests_of(prepare(part, conv_counter), conv_counter)
            clock_end = assign_times(part_reqs, gap_s, clock_end)
            reqs.extend(part_reqs)
        for request in order.add(reqs):
            run.replay(request, progress)
    for request in order.drain():
        run.replay(request, progress)
    if not run.requests:
        raise ValueError(
            f"nothing to replay in {', '.join(str(p) for p in paths)}: {conversations} "
            "conversation(s) but no request (a request is an assistant reply that follows at least one "
            "message)"
        )
    main_model = max(run.models, key=lambda m: run.models[m]) if run.models else model_id
    return ReplayResult(
        model_id=main_model,
        files=[str(p) for p in paths],
        conversations=conversations,
        requests=run.requests,
        input_tokens=run.input_tokens,
        output_tokens=run.output_tokens,
        gap_s=gap_s,
        rules=table.rules(main_model),
        price=table.price(main_model),
        strategies=run.ordered_totals(),
        response_cache=run.repeats.response,
        intention=run.repeats.intention,
        seconds=time.perf_counter() - started,
        largest_request_tokens=run.largest,
        untimed_requests=run.untimed,
        models=dict(run.models),
        token_estimate=calibration.name,
        logged_requests=run.logged_requests,
        logged=run.logged if run.logged.requests else None,
        fidelity=run.fidelity if run.fidelity.calls else None,
        late_conversations=order.late_conversations,
        forced_model=model_id if force_model else None,
        logged_models=dict(run.logged_models),
        price_source=table.price_source(main_model),
        as_logged_source=_as_logged_source(run.logged_requests, run.predicted_requests),
        output_tokens_note=CLAUDE_CODE_OUTPUT_NOTE if run.claude_code_usage else None,
    )


def _conversation_model(conv: object) -> str | None:
    """The model of a conversation's first reply that names one."""
    for message in getattr(conv, "messages", ()):
        if message.role == "assistant" and message.model:
            return str(message.model)
    return None


def _as_logged_source(logged: int, predicted: int) -> str | None:
    if not logged and not predicted:
        return None
    return "mixed" if logged and predicted else ("logged" if logged else "predicted")


class _Run:
    """The state of one replay: per strategy and model a strategy and its simulator, the totals, the log's bill."""

    def __init__(
        self,
        names: list[str],
        table: ModelTable,
        combined: bool,
        response_cache_ttl_s: float | None,
        model_id: str,
        force_model: bool,
    ) -> None:
        self.names, self.table, self.combined = names, table, combined
        self.model_id, self.force_model = model_id, force_model
        self.totals: dict[str, StrategyTotals] = {}
        self.unavailable: dict[str, str] = {}
        self.runners: dict[tuple[str, str], tuple[Strategy, PromptCacheSimulator | OpenAIPrefixCache]] = {}
        self.repeats = RepeatCounter(model_id, response_cache_ttl_s)
        self.logged = LoggedTotals()
        self.fidelity = Fidelity()
        self.models: dict[str, int] = {}
        self.logged_models: dict[str, int] = {}
        self.requests = self.input_tokens = self.output_tokens = self.largest = self.untimed = 0
        self.logged_requests = 0
        self.predicted_requests = 0  # as-logged requests priced from the client's placement rules (no usage)
        self.claude_code_usage = False  # a Claude Code call logged usage (its output_tokens is a snapshot)
        self._left: dict[str, int] = {}  # conversation id -> requests not yet replayed

    def _runner(self, name: str, model: str) -> tuple[Strategy, PromptCacheSimulator | OpenAIPrefixCache] | None:
        key = (name, model)
        runner = self.runners.get(key)
        if runner is None and name not in self.unavailable:
            rules, price = self.table.rules(model), self.table.price(model)
            try:
                strategy = make_strategy("anchored-tail" if name == COMBINED else name, rules, price)
            except StrategyUnavailable as exc:
                self.unavailable[name] = str(exc)
                return None
            runner = self.runners[key] = (strategy, make_simulator(rules, price))
        return runner

    def _row(self, name: str, description: str) -> StrategyTotals:
        row = self.totals.get(name)
        if row is None:
            row = self.totals[name] = StrategyTotals(name, description)
        return row

    def replay(self, request: Request, progress: Callable[[int, int | None], None] | None) -> None:
        model = self.model_id if self.force_model or not request.model else request.model
        price = self.table.price(model)
        self.models[model] = self.models.get(model, 0) + 1
        self.requests += 1
        self.input_tokens += request.input_tokens
        self.output_tokens += request.output_tokens
        self.largest = max(self.largest, request.input_tokens)
        self.untimed += not request.timed
        cid = request.prepared.conversation.id
        if request.number == 0:
            self._left[cid] = len(request.prepared.conversation.request_ends())
        out_cost = request.output_tokens * price.at(request.input_tokens).output / 1_000_000
        hit = self.repeats.feed(request)
        names = self.names
        usage = request.usage
        # a Claude Code log without usage: the client's own layout is known (its placement rules), so as-logged is
        # still priced, on estimated sizes: a predicted row
        predicted = usage is None and request.prepared.conversation.meta.get("format") == "claude-code"
        if usage is not None:
            self.logged_requests += 1
            self.claude_code_usage |= request.prepared.conversation.meta.get("format") == "claude-code"
            billed = request.model or self.model_id
            self.logged_models[billed] = self.logged_models.get(billed, 0) + 1
            logged_usd = self.logged.add(usage, self.table.price(billed))
        if (usage is not None or predicted) and AS_LOGGED not in names:
            names = [*names, AS_LOGGED]
            self.names = names
        self.predicted_requests += predicted
        cum, hashes, n = request.prepared.cum, request.prepared.hashes, request.n_blocks
        key = request.prepared.conversation.meta.get("prompt_cache_key")
        cache_key = key if isinstance(key, str) else None
        if usage is not None and request.number == 0:
            self._warm(request, model, names)
        for name in names:
            runner = self._runner(name, model)
            if runner is None:
                continue
            strategy, simulator = runner
            cost = simulator.simulate(cum, hashes, n, strategy.place(request), request.time_s, cache_key)
            row = self._row(name, strategy.description)
            if name == AS_LOGGED:
                # the log's layout is known (and billed) only where the call logged usage: the row covers those
                # requests; the others are simulated (they keep the cache state right) but not counted, except
                # where the layout is predicted (no usage at all: the row covers every request)
                row.logged_only = not self.predicted_requests
                if usage is None and not predicted:
                    row.cumulative_usd.append(row.cost_usd)
                    continue
                if usage is not None:
                    self.fidelity.add(request, model, logged_usd, cost)
            _account(row, cost, out_cost, usage is not None)
        if self.combined:
            row = self._row(COMBINED, "anchored-tail, with the ResponseCache answering exact repeats")
            if hit:  # answered from the ResponseCache: no model call, nothing billed
                row.requests += 1
                row.cumulative_usd.append(row.cost_usd)
            else:
                runner = self._runner(COMBINED, model)
                if runner is not None:
                    strategy, simulator = runner
                    cost = simulator.simulate(cum, hashes, n, strategy.place(request), request.time_s, cache_key)
                    _account(row, cost, out_cost, usage is not None)
        left = self._left.get(cid, 1) - 1
        if left <= 0:  # the conversation is over: release what strategies keep for it
            self._left.pop(cid, None)
            for (_, _), (strategy, _) in self.runners.items():
                strategy.forget(cid)
            self.repeats.forget(cid)
        else:
            self._left[cid] = left
        if progress is not None:
            progress(self.requests, None)

    def _warm(self, request: Request, model: str, names: list[str]) -> None:
        """A conversation whose first call read from the cache found that prefix cached by traffic the replay
        cannot see (another session of the same agent, the conversation a compaction call summarises): when a
        block boundary ends exactly where the logged read ends (``promptcache.replay._sizes`` fits one there),
        every strategy's simulator starts with that prefix cached, with the TTL the call wrote at (1 h if it wrote
        any 1-hour tokens, else 5 min)."""
        prepared, usage = request.prepared, request.usage
        if usage is None or not usage.cache_read_tokens:
            return
        cum = prepared.cum
        boundary = bisect.bisect_left(cum, usage.cache_read_tokens, 1, request.n_blocks + 1)
        if boundary > request.n_blocks or cum[boundary] != usage.cache_read_tokens:
            return
        ttl = 3600.0 if usage.cache_write_1h_tokens else 300.0
        for name in [*names, COMBINED] if self.combined else names:
            runner = self._runner(name, model)
            if runner is not None:
                runner[1].seed(prepared.hashes[boundary], request.time_s, ttl)

    def ordered_totals(self) -> dict[str, StrategyTotals]:
        """Rows in the requested order (``as-logged`` after them, the combined row last)."""
        out: dict[str, StrategyTotals] = {}
        for name in [*self.names, COMBINED]:
            if name in self.unavailable:
                out[name] = StrategyTotals(name, unavailable=self.unavailable[name])
            elif name in self.totals:
                out[name] = self.totals[name]
        return out


def _account(row: StrategyTotals, cost: RequestCost, out_cost: float, logged: bool) -> None:
    row.requests += 1
    row.model_calls += 1
    row.input_tokens += cost.input_tokens
    row.read_tokens += cost.read_tokens
    row.write_tokens += cost.write_tokens
    row.write_1h_tokens += cost.write_1h_tokens
    row.requests_with_read += cost.cache_hit
    row.cost_usd += cost.cost_usd
    if logged:
        row.logged_cost_usd += cost.cost_usd
    row.output_cost_usd += out_cost
    row.cumulative_usd.append(row.cost_usd)
