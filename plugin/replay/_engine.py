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

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from promptcache._pricing import ModelPrice, base_model_id

from ._as_logged import Fidelity, LoggedTotals
from ._causes import CauseTotals
from ._inputs import MergedInput, expand_inputs
from ._model_table import ModelTable
from ._models import CacheRules
from ._prepare import assign_times, check_gap_s, prepare, requests_of
from ._registry import PlacementName, StrategyName, check_strategy_names
from ._run import Run as _Run
from ._sizes import split_on_prefix_change
from ._skipped import SkippedLines, skipping
from ._stream import TimeOrder, iter_conversations
from ._tokens import CLAUDE, RAW, Calibration, TokenCounter, calibration_for
from ._totals import AS_LOGGED, COMBINED, StrategyTotals, account
from ._transcript import Conversation

if TYPE_CHECKING:  # the repeat counters import LangChain: loaded when a replay starts, not for --help
    from ._repeats import IntentionStats, ResponseCacheStats

__all__ = ["DEFAULT_STRATEGIES", "COMBINED", "PLACEMENTS", "ReplayResult", "StrategyTotals", "account", "run_replay"]

DEFAULT_STRATEGIES: tuple[StrategyName, ...] = ("none", "last-message", "langchain-aws", "multi-point", "anchored-tail")
DEFAULT_GAP_S = 10.0
#: ``ReplayResult.output_tokens_note`` for a log with Claude Code usage.
CLAUDE_CODE_OUTPUT_NOTE = (
    "streaming snapshot: Claude Code logs output_tokens while the reply streams, often under half of the final "
    "count; output figures from this log are lower bounds"
)
_NOT_PLACEMENTS = frozenset({COMBINED, AS_LOGGED, "hindsight"})
#: The rows a user can install (the decision chooses among them, ``none`` and their ``@1h`` variants).
PLACEMENTS: tuple[PlacementName, ...] = ("last-message", "langchain-aws", "multi-point", "anchored-tail")


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
    skipped: SkippedLines = field(default_factory=SkippedLines)  # broken lines the readers skipped
    merged: MergedInput = field(default_factory=MergedInput)  # inputs and calls read more than once, counted once
    span_s: float = 0.0  # seconds from the first request to the last, on the replay clock
    monthly_requests: int | None = None  # the team's volume for the decision's monthly figure (else from ``span_s``)
    formats: dict[str, int] = field(default_factory=dict)  # conversation format (``meta["format"]``) -> conversations
    #: ``NAME@1h`` and ``NAME+keep-alive`` bills of each row (``promptcache.replay._variants``)
    variants: dict[str, StrategyTotals] = field(default_factory=dict)
    #: row -> cause -> its tokens and USD (``promptcache.replay._causes``)
    miss_causes: dict[str, dict[str, CauseTotals]] = field(default_factory=dict)
    #: where the ``as-logged`` row's figures come from: ``"logged"`` (the log's usage: sizes, TTLs, breakpoints),
    #: ``"predicted"`` (no usage: the client's placement rules on estimated sizes), ``"mixed"``, or ``None``
    as_logged_source: str | None = None
    #: why the output-token figures are not exact, or ``None``: Claude Code writes each reply's ``usage`` while it
    #: streams, so its logged ``output_tokens`` is a snapshot taken before the reply ended (often under half of it)
    output_tokens_note: str | None = None
    #: requests priced as ``model_id`` because the log names no model for them (not counting ``--model``)
    assumed_model_requests: int = 0
    #: input-side USD with every prompt token billed at the input price (no cache at all), over all requests and
    #: over those with logged usage: the no-cache counterfactual where the provider caches automatically (OpenAI)
    no_cache_usd: float = 0.0
    no_cache_logged_usd: float = 0.0

    @property
    def model_source(self) -> str:
        """Where each call's model came from: ``"forced"`` (``--model``), ``"log"`` (every call names one),
        ``"assumed"`` (none does: all priced as ``model_id``) or ``"mixed"``."""
        if self.forced_model is not None:
            return "forced"
        if not self.assumed_model_requests:
            return "log"
        return "assumed" if self.assumed_model_requests >= self.requests else "mixed"

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

    def cheapest_placement(self) -> str | None:
        """The available placement strategy (not ``none``, the combined row, nor the references ``as-logged`` and
        ``hindsight``) with the lowest cost; ``None`` when the run compared none."""
        rows = [r for r in self.strategies.values() if not r.unavailable and r.name not in _NOT_PLACEMENTS | {"none"}]
        return min(rows, key=lambda r: (r.cost_usd, r.name != "anchored-tail")).name if rows else None

    def best(self) -> str | None:
        """The row the decision recommends (``promptcache.replay._decision``): ``as-logged`` when the log's own
        layout stays, ``none`` when caching should stay off, else the placement to switch to; ``None`` when the run
        compared no placement."""
        from ._decision import decide

        decision = decide(self)
        return decision.strategy if decision is not None else None


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
    strict: bool = False,
) -> ReplayResult:
    """Replay the conversations of ``paths``.

    Args:
        paths: JSON/JSONL transcript files (see ``promptcache.replay._readers``).
        model_id: the model of calls whose log names none (all calls with ``force_model``); a Bedrock model id
            (regional prefixes and ARNs resolve) or an Anthropic API id (``claude-opus-4-6``).
        strategies: names from ``promptcache.replay._registry.STRATEGIES``; ``none`` is always added (the baseline),
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
        strict: stop at the first JSONL line that is not valid JSON (``TranscriptError``); by default such lines
            are skipped and counted in ``ReplayResult.skipped`` (``promptcache.replay._skipped``).

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
    counter = cast(TokenCounter, _LazyCounter(calibration))
    order = TimeOrder()
    inputs, merged = expand_inputs(paths)
    skipped = SkippedLines()
    per_model = tokens is None and calibration is not RAW and not force_model  # each Claude model's own tokenizer
    with contextlib.ExitStack() as stack:
        if not strict:
            stack.enter_context(skipping(skipped))
        conversations = _replay_all(
            run,
            iter_conversations(inputs, merged, skip_non_logs=not strict and len(inputs) > 1),
            counter,
            gap_s,
            order,
            progress,
            model_id if per_model else None,
        )
    run.variants.drain()
    run.finish()
    if AS_LOGGED in names and not run.logged_requests and not run.predicted_requests:
        run.unavailable[AS_LOGGED] = (
            "the log records no usage, so its own cache layout and bill are unknown (as-logged needs a Claude Code "
            "session log or a Bedrock invocation log, or transcripts that keep each reply's usage)"
        )
    if AS_LOGGED in run.unavailable:  # no usage, or the log's layout breaks the (forced) model's limit
        run.ledgers.pop(AS_LOGGED, None)
        run.variants.totals = {k: v for k, v in run.variants.totals.items() if not k.startswith(AS_LOGGED)}
        run.one_model.totals = {k: v for k, v in run.one_model.totals.items() if not k.startswith(AS_LOGGED)}
        run.fidelity = Fidelity()
    if not run.requests and inputs and len(merged.not_logs) == len(inputs):
        raise ValueError(
            f"nothing to replay: none of the {len(inputs):,} files given is a log (each is named in a warning)"
        )
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
        span_s=run.last_s - run.first_s if run.requests else 0.0,
        formats=dict(run.formats),
        variants=run.variant_totals(),
        miss_causes={name: ledger.totals for name, ledger in run.ledgers.items()},
        as_logged_source=_as_logged_source(run.logged_requests, run.predicted_requests),
        output_tokens_note=CLAUDE_CODE_OUTPUT_NOTE if run.claude_code_usage else None,
        skipped=skipped,
        merged=merged,
        assumed_model_requests=run.assumed_model,
        no_cache_usd=run.no_cache_usd,
        no_cache_logged_usd=run.no_cache_logged_usd,
    )


def _replay_all(
    run: _Run,
    conversations_in: Iterable[Conversation],
    counter: TokenCounter,
    gap_s: float,
    order: TimeOrder,
    progress: Callable[[int, int | None], None] | None,
    per_model: str | None,
) -> int:
    """Replay every conversation, in send-time order; returns how many were read. ``per_model``: the default
    model, when each conversation's sizes are estimated with its own model's tokenizer (else ``None``)."""
    clock_end = 0.0
    conversations = 0
    for conv in conversations_in:
        conversations += 1
        fmt = str(conv.meta.get("format") or "messages")
        run.formats[fmt] = run.formats.get(fmt, 0) + 1
        counter.prime(b.text for m in conv.messages for b in m.blocks)
        counter.prime(b.text for b in conv.system)
        conv_counter = counter
        if per_model is not None:
            conv_counter = counter.calibrated(calibration_for(_conversation_model(conv) or per_model))
        parts = [conv]
        if conv.meta.get("hidden_prefix") is True:
            visible = [sum(conv_counter.block(b) for b in m.blocks) for m in conv.messages]
            parts = [part for view in model_views(conv) for part in split_on_prefix_change(view, visible)]
        reqs = []
        for part in parts:  # the parts of one conversation enter the time order together
            part_reqs = requests_of(prepare(part, conv_counter), conv_counter)
            clock_end = assign_times(part_reqs, gap_s, clock_end)
            reqs.extend(part_reqs)
        for request in order.add(reqs):
            run.replay(request, progress)
    for request in order.drain():
        run.replay(request, progress)
    return conversations


def model_views(conv: Conversation) -> list[Conversation]:
    """One view of a hidden-prefix conversation per model its calls went to (``[conv]`` when one model did): the
    same messages, with only that model's calls as requests (id ``"<id>@<model>"``). A model switch on one thread
    (``/model``) is not a broken prefix: each model has its own cache (a simulator per model) and its own unlogged
    system prompt, whose size that model's logged usage tells (``promptcache.replay._sizes``); the other model's
    turns are history, sized from the growth between this model's calls."""
    ends = conv.request_ends()
    models = list(dict.fromkeys(conv.messages[cut].model for cut in ends))
    if len(models) < 2:
        return [conv]
    return [
        dataclasses.replace(
            conv,
            id=f"{conv.id}@{model}",
            replies=[cut for cut in ends if conv.messages[cut].model == model],
            meta={**conv.meta, "model_view": model},
        )
        for model in models
    ]


class _LazyCounter:
    """A ``TokenCounter`` made on first use: loading the tokenizer (about a second) waits until there is text to
    count, so reading the first file is not held up by it."""

    def __init__(self, calibration: Calibration) -> None:
        self._calibration = calibration
        self._counter: TokenCounter | None = None

    def __getattr__(self, name: str) -> Any:
        if self._counter is None:
            self._counter = TokenCounter(self._calibration)
        return getattr(self._counter, name)


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
