"""What a replay's rows say, for the decision, the miss-cause fixes, the terminal report and the chart: a row if it
ran, its cost on the compared requests, which kind of log the run was (Claude Code, OpenAI), which rows the report
shows (``shown_rows``, ``cause_names``: the table and the chart show the same ones) and what each is compared with
(``versus_base``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._totals import COMBINED
from ._variants import KEEP_ALIVE, ONE_HOUR

if TYPE_CHECKING:
    from ._decision import Decision
    from ._engine import ReplayResult, StrategyTotals

__all__ = [
    "available",
    "ttl_choice",
    "ttl_variant",
    "cause_names",
    "cost",
    "is_claude_code",
    "is_openai",
    "models_label",
    "ranked_models",
    "shown_rows",
    "versus_base",
    "versus_name",
]


def available(result: ReplayResult, name: str) -> StrategyTotals | None:
    """Row ``name`` (a strategy or a variant), ``None`` when it did not run or is unavailable."""
    row = result.strategies.get(name) or result.variants.get(name)
    return None if row is None or row.unavailable else row


def is_claude_code(result: ReplayResult) -> bool:
    """Whether most conversations come from Claude Code logs."""
    cc = result.formats.get("claude-code", 0)
    return cc > 0 and cc * 2 >= sum(result.formats.values())


def is_openai(result: ReplayResult) -> bool:
    """Whether the run's main model caches automatically (OpenAI: every row reads the cache, even ``none``)."""
    return result.rules.family == "openai"


def ranked_models(result: ReplayResult) -> list[tuple[str, int]]:
    """``(model, calls)`` of every model that served the traffic, in the one order the report lists them: most
    calls first, ties by name."""
    return sorted(result.models.items(), key=lambda item: (-item[1], item[0]))


def models_label(result: ReplayResult) -> str:
    """What served the traffic, for the table's and the chart's titles: the model where one did (``model_id``),
    else how many and, in ``ranked_models`` order, the two that served most calls and how many others
    (``"4 models (claude-opus-4-6 255 calls, claude-haiku-4-5-20251001 133, 2 others)"``); a third model is named
    rather than counted as ``"1 other"``."""
    if len(result.models) <= 1:
        return result.model_id
    ranked = ranked_models(result)
    first, calls = ranked[0]
    named = ranked[1:] if len(ranked) <= 3 else ranked[1:2]
    top = [f"{first} {calls:,} call{'' if calls == 1 else 's'}", *(f"{m} {n:,}" for m, n in named)]
    rest = len(ranked) - len(top)
    others = [f"{rest} others"] if rest else []
    return f"{len(ranked)} models ({', '.join([*top, *others])})"


def cost(row: StrategyTotals, logged: bool) -> float:
    """The row's input-side USD on the compared requests (``logged``: those with logged usage)."""
    return row.logged_cost_usd if logged and not row.logged_only else row.cost_usd


def shown_rows(result: ReplayResult, decision: Decision | None = None) -> dict[str, StrategyTotals]:
    """The report's rows, in the table's order: every strategy that ran (unavailable ones included), less the
    ``anchored-tail+response-cache`` row where the ResponseCache answered nothing or the log is Claude Code's (the
    cache could not sit in front of those calls), plus the cheapest ``@1h`` variant (not a logged-only one) where
    the model offers the 1-hour TTL, ``anchored-tail@1h`` where the log's own layout wrote 1-hour entries (the
    report compares that layout with it), and, given the ``decision``, the variant the ``ttl-expired`` fix of each
    miss-cause row prices (``as-logged@1h``: the decision's and the fix's sentence cite it)."""
    rows = dict(result.strategies)
    if COMBINED in rows and (result.response_cache.hits == 0 or is_claude_code(result)):
        del rows[COMBINED]
    long = [(r.cost_usd, n) for n, r in result.variants.items() if n.endswith("@1h") and not r.logged_only]
    if long:
        _, name = min(long)
        rows[name] = result.variants[name]
    # the row the report compares the log's own layout with where that layout wrote 1-hour entries
    # (promptcache.replay._layout_ttl): shown, so that the comparison is with a row the reader sees
    as_logged, ours = result.strategies.get("as-logged"), result.variants.get("anchored-tail@1h")
    if as_logged is not None and as_logged.write_1h_tokens and ours is not None and not ours.unavailable:
        rows["anchored-tail@1h"] = ours

    for name in cause_names(result, decision):
        cited = ttl_variant(result, name) if "ttl-expired" in result.miss_causes[name] else None
        if cited is not None and cited not in rows:
            rows[cited] = result.variants[cited]
    return rows


def cause_names(result: ReplayResult, decision: Decision | None) -> list[str]:
    """The strategies of the miss-cause table, in order: the current layout, the recommended row, and where the
    decision is to leave caching off from ``none``, the cheapest placement; ``none`` (it caches nothing, so every
    token misses by construction) and rows without miss causes left out."""
    names: list[str] = []
    if decision is not None:
        names = [decision.current, decision.strategy]
        if decision.action == "disable" and decision.current == "none":
            names.append(result.cheapest_placement() or "none")
    return [n for n in dict.fromkeys(names) if n in result.miss_causes and n != "none"]


def versus_base(result: ReplayResult, row: StrategyTotals) -> float | None:
    """The USD a row's "vs none" / "vs no cache" share divides by: ``none`` (on the logged requests for a
    logged-only row), or on an OpenAI log, where every row reads the cache, every prompt token at the input price
    (a counterfactual); ``None`` when there is no such row."""
    if is_openai(result):
        return result.no_cache_logged_usd if row.logged_only else result.no_cache_usd
    none = result.strategies.get("none")
    if none is None:
        return None
    return none.logged_cost_usd if row.logged_only else none.cost_usd


def versus_name(result: ReplayResult) -> str:
    """What ``versus_base`` is, as the table's column names it: ``"no cache"`` on an OpenAI log, else ``"none"``."""
    return "no cache" if is_openai(result) else "none"


def ttl_variant(result: ReplayResult, name: str) -> str | None:
    """The variant ``promptcache.replay._fixes.ttl_option`` prices for row ``name`` (``"as-logged@1h"``): the row its sentence cites."""
    choice = ttl_choice(result, name)
    return None if choice is None else choice[0]


def ttl_choice(result: ReplayResult, name: str) -> tuple[str, str, float] | None:
    """``(variant, fix, saved_usd)`` of ``promptcache.replay._fixes.ttl_option``."""
    base = available(result, name)
    if base is None:
        return None
    options = []
    for suffix, text in ((ONE_HOUR, "1-hour TTL"), (KEEP_ALIVE, "keep-alive before the TTL ends")):
        variant = result.variants.get(name + suffix)
        if variant is not None:
            options.append((base.cost_usd - variant.cost_usd, text, name + suffix))
    if not options:
        return None
    saved, text, variant_name = max(options)
    return variant_name, text, saved
