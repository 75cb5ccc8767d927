"""What staying on one model per conversation would cost, priced by the same simulator: the ``NAME+one-model``
variant of every placement row (and ``as-logged``).

Models do not share a cache, so a conversation that switches model re-writes its prefix under the new one (the
``model-switch`` miss cause, ``promptcache.replay._causes``). The variant replays the same requests, with the same
cache points, with every request of a conversation sent to the model of that conversation's first request: its
cache, its cache rules and its prices (input side and output). The saving it shows is therefore the switch's whole
price, the re-written prefixes *and* the price difference between the models (staying on a dearer model can cost
more than the switch did: then the fix recovers 0 and its text names the loss, ``promptcache.replay._fixes``).

Until the first request that switches model, the variant is the row itself (every request already went to its
conversation's first model), so nothing is simulated twice: at that request the row's simulators and totals are
copied, and from then on the variant runs on simulators of its own. A log without a switch has no variant.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping

from ._model_table import ModelTable
from ._prepare import Request
from ._simulator import Checkpoint, PromptCacheSimulator
from ._strategies import Strategy
from ._totals import NO_VARIANTS, StrategyTotals, account

__all__ = ["ONE_MODEL", "OneModel"]

ONE_MODEL = "+one-model"


class OneModel:
    """The ``NAME+one-model`` bills (module docstring), fed by ``promptcache.replay._run.Run``."""

    def __init__(self, table: ModelTable) -> None:
        self.table = table
        self.totals: dict[str, StrategyTotals] = {}
        self.active = False  # a request switched model: the variants run on their own simulators
        self._first: dict[str, str] = {}  # conversation id -> the model of its first request
        self._sims: dict[tuple[str, str], PromptCacheSimulator] = {}

    def model_of(self, request: Request, model: str) -> str:
        """The model the variant sends ``request`` to: its conversation's first (``model``: the request's own)."""
        return self._first.setdefault(request.prepared.conversation.id, model)

    def note(
        self,
        request: Request,
        model: str,
        runners: Mapping[tuple[str, str], tuple[Strategy, object]],
        totals: Mapping[str, StrategyTotals],
    ) -> None:
        """Before ``request`` (priced as ``model``) is simulated: at the first switch, copy every row's simulators
        (``runners``: (row, model) -> (strategy, simulator)) and totals, which the variants equal until then."""
        if self.model_of(request, model) == model or self.active:
            return
        self.active = True
        for (name, m), (_, sim) in runners.items():
            if name not in NO_VARIANTS and isinstance(sim, PromptCacheSimulator):
                self._sims[(name, m)] = copy.deepcopy(sim)
        for name, row in totals.items():
            if name not in NO_VARIANTS:
                self.totals[name + ONE_MODEL] = dataclasses.replace(
                    row, name=name + ONE_MODEL, cumulative_usd=list(row.cumulative_usd)
                )

    def _sim(self, name: str, model: str) -> PromptCacheSimulator:
        sim = self._sims.get((name, model))
        if sim is None:
            sim = self._sims[(name, model)] = PromptCacheSimulator(self.table.rules(model), self.table.price(model))
        return sim

    def seed(self, row: str, model: str, prefix_hash: bytes, now_s: float, ttl_s: float) -> None:
        """A prefix cached by traffic outside the replay (as the row's own simulator gets it)."""
        if self.active:
            self._sim(row, model).seed(prefix_hash, now_s, ttl_s)

    def add(
        self, row_name: str, base: StrategyTotals, request: Request, points: list[Checkpoint], counted: bool
    ) -> None:
        """Bill ``request`` with ``points`` on the variant of ``row_name`` (after ``note``; ``counted``: it counts
        in the row)."""
        if not self.active:
            return
        model = self._first[request.prepared.conversation.id]
        prepared = request.prepared
        cost = self._sim(row_name, model).simulate(
            prepared.cum,
            prepared.hashes,
            request.n_blocks,
            points,
            request.time_s,
            done_s=request.done_s,
            start_s=request.start_s,
        )
        name = row_name + ONE_MODEL
        row = self.totals.get(name)
        if row is None:
            row = self.totals[name] = StrategyTotals(name, base.description, logged_only=base.logged_only)
        if counted:
            out_cost = request.output_tokens * self.table.price(model).at(request.input_tokens).output / 1_000_000
            account(row, cost, out_cost, request.usage is not None)
