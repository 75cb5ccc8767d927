"""The fix of each miss cause and what it recovers, priced by the same simulator (``cause_rows``).

- ``ttl-expired``: the row's ``@1h`` or ``+keep-alive`` variant, whichever saves more (``promptcache.replay._variants``);
- ``model-switch``: the row's ``+one-model`` variant, every request of a conversation on its first model, prices
  included, input and output side (``promptcache.replay._one_model``); 0 when no conversation switches model;
- ``no-cache-point`` / ``checkpoint-limit`` / ``lookback``: the cheapest placement's row (not on a Claude Code log's
  own layout, which the user cannot change);
- ``prefix-changed``: **not priced** (``recoverable_usd`` ``None``): the fix would replay the conversation with the
  changed part held fixed, and the log does not hold those requests (after a compaction the history it summarised,
  which may not fit the context; for an unlogged system prompt or tool change, only its size is known);
- ``first-call``: nothing to recover (0): writing new content once is what caching costs.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

from ._causes import CAUSES
from ._one_model import ONE_MODEL
from ._result_rows import available as _available
from ._result_rows import cost as _cost
from ._result_rows import is_claude_code
from ._variants import KEEP_ALIVE, ONE_HOUR

if TYPE_CHECKING:
    from ._engine import ReplayResult

__all__ = ["cause_rows", "one_model_saving"]

_FIX_TEXT = {
    "first-call": None,
    "prefix-changed": "keep the system prompt, tools and earlier messages unchanged (a compaction rewrites the "
    "prefix); not priced: the log does not hold the requests an unchanged prefix would have sent",
    "model-switch": "stay on one model within a conversation (models do not share a cache)",
    "below-minimum": None,
    "unexplained": None,
}
_PLACEMENT_CAUSES = ("no-cache-point", "checkpoint-limit", "lookback")


def one_model_saving(result: ReplayResult, name: str) -> float | None:
    """What replaying row ``name`` with one model per conversation saves, USD over the log, input and output side
    (``promptcache.replay._one_model``): 0.0 when no conversation switches model, ``None`` without the row."""
    base = _available(result, name)
    if base is None:
        return None
    variant = result.variants.get(name + ONE_MODEL)
    if variant is None:
        return 0.0
    return base.cost_usd + base.output_cost_usd - variant.cost_usd - variant.output_cost_usd


def cause_rows(result: ReplayResult, name: str) -> list[dict[str, Any]]:
    """The miss causes of row ``name`` with their fix and what it recovers, USD over the log (``recoverable_usd``
    is the row's cost minus the cost of the row with the fix applied; ``None`` where no fix is priced)."""
    causes = result.miss_causes.get(name) or {}
    base = _available(result, name)
    if base is None:
        return []
    logged = base.logged_only
    fixes: dict[str, tuple[str | None, float | None]] = {}
    options = []
    for suffix, text in ((ONE_HOUR, "1-hour TTL"), (KEEP_ALIVE, "keep-alive before the TTL ends")):
        variant = result.variants.get(name + suffix)
        if variant is not None:
            options.append((base.cost_usd - variant.cost_usd, text))
    if options:
        saved, text = max(options)
        fixes["ttl-expired"] = (text, saved)
    switch_saving = one_model_saving(result, name)
    if "model-switch" in causes and switch_saving is not None:
        how = (
            "stay on one model within a conversation (replayed on each conversation's first model, its prices "
            "included; models do not share a cache)"
            if name + ONE_MODEL in result.variants
            else "none here: no conversation switches model (another conversation's model cached the prefix)"
        )
        fixes["model-switch"] = (how, switch_saving)
    placed = [c for c in _PLACEMENT_CAUSES if c in causes]
    cheapest = result.cheapest_placement()
    target = _available(result, cheapest) if cheapest and cheapest != name else None
    saved = base.cost_usd - _cost(target, logged) if target is not None else 0.0
    if placed and target is not None and saved > 0 and not (logged and is_claude_code(result)):
        main = max(placed, key=lambda c: causes[c].cost_usd)
        for c in placed:
            fixes[c] = (f"placement change: {cheapest}", saved) if c == main else (f"see {main}", None)
    rows = []
    for cause in CAUSES:
        totals = causes.get(cause)
        if totals is None:
            continue
        fix, recoverable = fixes.get(cause, (_FIX_TEXT.get(cause), 0.0 if cause == "first-call" else None))
        rows.append(
            {
                "cause": cause,
                "cache_write_tokens": totals.cache_write_tokens,
                "uncached_tokens": totals.uncached_tokens,
                "cost_usd": round(totals.cost_usd, 6),
                "recoverable_usd": None if recoverable is None else round(recoverable, 6),
                "fix": fix,
                "requests": totals.events,
                "longest_gap_s": round(max(totals.gaps_s), 1) if totals.gaps_s else None,
                "median_gap_s": round(statistics.median(totals.gaps_s), 1) if totals.gaps_s else None,
            }
        )
    return rows
