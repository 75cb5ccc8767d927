"""The state of one replay run: every strategy's simulator per model, the rows they bill, the log's own bill and
the ResponseCache / intention counters, fed one request at a time (`Run.replay`) by `promptcache.replay._engine`."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import TYPE_CHECKING

from promptcache._pricing import ModelPrice

from ._as_logged import Fidelity, LoggedTotals
from ._causes import MissLedger, inspect, inspect_automatic
from ._model_table import ModelTable
from ._one_model import ONE_MODEL, OneModel
from ._openai_cache import OpenAIPrefixCache
from ._prepare import Request
from ._registry import make_strategy
from ._simulator import Checkpoint, PromptCacheSimulator, RequestCost
from ._simulators import make_simulator
from ._strategies import Strategy, StrategyUnavailable
from ._totals import AS_LOGGED, COMBINED, NO_VARIANTS, StrategyTotals, account
from ._variants import KEEP_ALIVE, ONE_HOUR, Variants

if TYPE_CHECKING:  # the repeat counters import LangChain: loaded when a replay starts, not for --help
    from ._repeats import RepeatCounter

__all__ = ["Run"]


class Run:
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
        self._response_cache_ttl_s = response_cache_ttl_s
        self._repeats: RepeatCounter | None = None
        self.logged = LoggedTotals()
        self.fidelity = Fidelity()
        self.models: dict[str, int] = {}
        self.logged_models: dict[str, int] = {}
        self.requests = self.input_tokens = self.output_tokens = self.largest = self.untimed = 0
        self.logged_requests = 0
        self.predicted_requests = 0  # as-logged requests priced from the client's placement rules (no usage)
        self.claude_code_usage = False  # a Claude Code call logged usage (its output_tokens is a snapshot)
        self._left: dict[str, int] = {}  # conversation id -> requests not yet replayed
        self.formats: dict[str, int] = {}
        self.first_s, self.last_s = float("inf"), float("-inf")
        self.variants = Variants(table)
        self.one_model = OneModel(table)  # the model-switch fix, priced
        self.assumed_model = 0  # requests priced as ``model_id`` because the log names no model
        self.no_cache_usd = self.no_cache_logged_usd = 0.0  # every prompt token at the input price
        self.ledgers: dict[str, MissLedger] = {}

    @property
    def repeats(self) -> RepeatCounter:
        """The ResponseCache and intention-cache counters, made at the first request (they load LangChain, which
        need not hold up reading the first file)."""
        if self._repeats is None:
            from ._repeats import RepeatCounter

            self._repeats = RepeatCounter(self.model_id, self._response_cache_ttl_s)
        return self._repeats

    def finish(self) -> None:
        """Release what the repeat counters keep once every request is replayed."""
        if self._repeats is not None:
            self._repeats.finish()

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

    def _combined(self, request: Request, model: str, hit: bool, out_cost: float, cache_key: str | None) -> None:
        """Bill ``request`` on the combined row (anchored-tail behind the ResponseCache)."""
        row = self._row(COMBINED, "anchored-tail, with the ResponseCache answering exact repeats")
        if hit:  # answered from the ResponseCache: no model call, nothing billed
            row.requests += 1
            row.cumulative_usd.append(row.cost_usd)
            return
        runner = self._runner(COMBINED, model)
        if runner is not None:
            strategy, simulator = runner
            cost = _simulate(COMBINED, simulator, request, strategy.place(request), cache_key)
            account(row, cost, out_cost, request.usage is not None)

    def _place(self, name: str, strategy: Strategy, request: Request) -> list[Checkpoint] | None:
        """``strategy``'s points for ``request``; ``None`` where it cannot place them (the log's own layout holds
        more points than a forced model allows): row ``name`` is then unavailable and its runners stop
        (``promptcache.replay._engine`` drops its variants, miss causes and fidelity once the run is over)."""
        try:
            return strategy.place(request)
        except StrategyUnavailable as exc:
            self.unavailable[name] = str(exc)
            for key in [k for k in self.runners if k[0] == name]:
                del self.runners[key]
            return None

    def _bill_price(self, billed: str, forced: ModelPrice) -> ModelPrice:
        """The price of the log's own bill for a call of model ``billed``: that model's, or, with ``--model``, the
        forced model's ``forced`` where ``billed`` has none (a test double, a private deployment; the bill is then
        not compared, ``ReplayResult.billed_mismatch``).

        Raises:
            KeyError: ``billed`` has no price and no model is forced.
        """
        try:
            return self.table.price(billed)
        except KeyError:
            if not self.force_model:
                raise
            return forced

    def _row(self, name: str, description: str) -> StrategyTotals:
        row = self.totals.get(name)
        if row is None:
            row = self.totals[name] = StrategyTotals(name, description)
        return row

    def replay(self, request: Request, progress: Callable[[int, int | None], None] | None) -> None:
        model = self.model_id if self.force_model or not request.model else request.model
        self.assumed_model += not self.force_model and not request.model
        price = self.table.price(model)
        self.models[model] = self.models.get(model, 0) + 1
        self.requests += 1
        self.input_tokens += request.input_tokens
        self.output_tokens += request.output_tokens
        self.largest = max(self.largest, request.input_tokens)
        self.untimed += not request.timed
        self.first_s, self.last_s = min(self.first_s, request.time_s), max(self.last_s, request.time_s)
        self.variants.until(request.time_s)
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
            logged_usd = self.logged.add(usage, self._bill_price(billed, price))
        if (usage is not None or predicted) and AS_LOGGED not in names:
            names = [*names, AS_LOGGED]
            self.names = names
        self.predicted_requests += predicted
        cum, hashes, n = request.prepared.cum, request.prepared.hashes, request.n_blocks
        no_cache = cum[n] * price.at(cum[n]).input / 1_000_000
        self.no_cache_usd += no_cache
        self.no_cache_logged_usd += no_cache if usage is not None else 0.0
        self.one_model.note(request, model, self.runners, self.totals)
        key = request.prepared.conversation.meta.get("prompt_cache_key")
        cache_key = key if isinstance(key, str) else None
        if usage is not None:
            self._warm(request, model, names)
        for name in names:
            runner = self._runner(name, model)
            if runner is None:
                continue
            strategy, simulator = runner
            points = self._place(name, strategy, request)
            if points is None:
                continue
            bedrock = isinstance(simulator, PromptCacheSimulator)  # OpenAI's automatic cache has no points to fix
            others = [
                sim
                for (other, m), (_, sim) in self.runners.items()
                if other == name and m != model and isinstance(sim, PromptCacheSimulator)
            ]
            if isinstance(simulator, PromptCacheSimulator):
                before = inspect(simulator, others, hashes, n, request.time_s)
            else:
                automatic = [
                    sim
                    for (other, m), (_, sim) in self.runners.items()
                    if other == name and m != model and isinstance(sim, OpenAIPrefixCache)
                ]
                before = inspect_automatic(simulator, automatic, request, request.time_s, cache_key)
            cost = _simulate(name, simulator, request, points, cache_key)
            row = self._row(name, strategy.description)
            counted = name != AS_LOGGED or usage is not None or predicted
            if name not in NO_VARIANTS and bedrock:
                self.variants.add(name, row, model, request, points, out_cost, counted)
                self.one_model.add(name, row, request, points, counted)
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
            rules = simulator.rules
            ledger = self.ledgers.setdefault(name, MissLedger())
            if bedrock:
                ledger.add(request, points, cost, before, price, rules.max_points, rules.min_tokens)
            else:
                ledger.add_automatic(request, cost, before, price, rules.min_tokens)
            account(row, cost, out_cost, usage is not None)
        if self.combined:
            self._combined(request, model, hit, out_cost, cache_key)
        left = self._left.get(cid, 1) - 1
        if left <= 0:  # the conversation is over: release what strategies keep for it
            self._left.pop(cid, None)
            for (_, _), (strategy, _) in self.runners.items():
                strategy.forget(cid)
            for ledger in self.ledgers.values():
                ledger.forget(cid)
            self.repeats.forget(cid)
        else:
            self._left[cid] = left
        if progress is not None:
            progress(self.requests, None)

    def _warm(self, request: Request, model: str, names: list[str]) -> None:
        """What the log read from the cache that the replay cannot have written: prefixes cached by traffic the
        replay does not see (the account's other sessions, the conversation a compaction call summarises). Every
        strategy's simulator gets the prefix cached, with the TTL the call wrote at (1 h if it wrote any 1-hour
        tokens, else 5 min), where an entry there is not already alive:

        - at a conversation's first call, the prefix the logged read ends at, when a block boundary ends exactly
          there (``promptcache.replay._sizes`` fits one there);
        - at any call, the longest cached level of the unlogged system/tools prefix (the blocks up to
          ``PreparedConversation.hidden_end``) that the logged read covers: it is the same for every session of the
          account, which keeps it warm through idle gaps.
        """
        prepared, usage = request.prepared, request.usage
        if usage is None or not usage.cache_read_tokens:
            return
        cum = prepared.cum
        boundaries = []
        if request.number == 0:
            boundary = bisect.bisect_left(cum, usage.cache_read_tokens, 1, request.n_blocks + 1)
            if boundary <= request.n_blocks and cum[boundary] == usage.cache_read_tokens:
                boundaries.append(boundary)
        hidden = prepared.hidden_end
        if 0 < hidden <= request.n_blocks:  # the longest cached level of the unlogged prefix the read covers
            tools_end = prepared.tools_end
            level = bisect.bisect_right(cum, usage.cache_read_tokens, tools_end + 1, hidden + 1) - 1
            while level > tools_end and cum[level] == cum[level - 1]:
                level -= 1
            if level > tools_end and cum[level]:
                boundaries.append(level)
        if not boundaries:
            return
        ttl = 3600.0 if usage.cache_write_1h_tokens else 300.0
        for name in [*names, COMBINED] if self.combined else names:
            runner = self._runner(name, model)
            if runner is not None:
                for boundary in boundaries:
                    if isinstance(runner[1], PromptCacheSimulator):
                        runner[1].seed(prepared.hashes[boundary], request.time_s, ttl, boundary)
                    else:
                        runner[1].seed(prepared.hashes[boundary], request.time_s, ttl)
                    if name not in NO_VARIANTS and isinstance(runner[1], PromptCacheSimulator):
                        self.variants.seed(name, model, prepared.hashes[boundary], request.time_s, ttl)
                        self.one_model.seed(name, model, prepared.hashes[boundary], request.time_s, ttl)

    def variant_totals(self) -> dict[str, StrategyTotals]:
        """The variants in row order (``@1h`` left out where it cost exactly what its row did: no 1-hour TTL)."""
        out: dict[str, StrategyTotals] = {}
        for name in self.names:
            reason = self.unavailable.get(name)
            if reason is not None:  # as-logged@1h: the same points, so unavailable for the same reason
                offers_1h = any(3600.0 in self.table.rules(m).ttls_s for m in self.models)
                if name == AS_LOGGED and offers_1h:
                    out[name + ONE_HOUR] = StrategyTotals(name + ONE_HOUR, unavailable=reason)
                continue
            base = self.totals.get(name)
            for key in (name + ONE_HOUR, name + KEEP_ALIVE, name + ONE_MODEL):
                row = self.variants.totals.get(key) or self.one_model.totals.get(key)
                if row is None or base is None:
                    continue
                if key.endswith(ONE_HOUR) and abs(row.cost_usd - base.cost_usd) <= 1e-12:
                    continue
                out[key] = row
        return out

    def ordered_totals(self) -> dict[str, StrategyTotals]:
        """Rows in the requested order (``as-logged`` after them, the combined row last)."""
        out: dict[str, StrategyTotals] = {}
        for name in [*self.names, COMBINED]:
            if name in self.unavailable:
                out[name] = StrategyTotals(name, unavailable=self.unavailable[name])
            elif name in self.totals:
                out[name] = self.totals[name]
        return out


def _simulate(
    name: str,
    simulator: PromptCacheSimulator | OpenAIPrefixCache,
    request: Request,
    points: list[Checkpoint],
    cache_key: str | None,
) -> RequestCost:
    """``simulator.simulate`` on ``request`` with ``points``; a refused placement names the strategy ``name``.

    Raises:
        ValueError: the points break the model's rules (``PromptCacheSimulator``), prefixed with the strategy.
    """
    prepared = request.prepared
    try:
        return simulator.simulate(
            prepared.cum,
            prepared.hashes,
            request.n_blocks,
            points,
            request.time_s,
            cache_key,
            done_s=request.done_s,
            start_s=request.start_s,
        )
    except ValueError as exc:
        raise ValueError(f"strategy {name}: {exc}") from exc
