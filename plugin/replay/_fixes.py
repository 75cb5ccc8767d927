"""The fix of each miss cause and what it recovers, priced by the same simulator (``cause_rows``).

One rule decides what is priced: a fix is priced when it is a change the user can make to the requests the log
holds (their TTL, a keep-alive, their placement, their model), and its recovered dollars are the row's cost minus
the simulator's cost of the same requests with that change. Where nothing the user controls would change those
requests, the fix says why and recovers 0; so does a fix whose price is a loss (the change costs more than the
cause: a keep-alive sent more often than the traffic reuses the prefix), and its text names the loss.

- ``ttl-expired``: the row's ``@1h`` or ``+keep-alive`` variant, whichever saves more (``promptcache.replay._variants``);
  on a model with automatic caching (OpenAI) neither exists (OpenAI keeps a prefix 5-10 minutes after its last use
  and offers no cache point to refresh it), so it is not priced;
- ``model-switch``: the row's ``+one-model`` variant, every request of a conversation on its first model, prices
  included, input and output side (``promptcache.replay._one_model``); 0 when no conversation switches model; not
  priced on automatic caching (the variant replays cache points);
- ``no-cache-point`` / ``cache-point-limit`` / ``lookback``: the cheapest placement's row (not on a Claude Code log's
  own layout, which the user cannot change);
- ``prefix-changed``: 0, with the reason. The changes the log shows are the client's, not the user's requests: a
  compaction replaces the history with its summary, new content written once (the history it replaced would not
  fit the context window, and keeping it is not in the log); an unlogged system prompt or tool change is Claude
  Code's own prompt, of which the log records only the size, so no change of the user's is known to recover it;
  in a call log, a thread re-sent with an earlier message changed is the user's own agent's edit: the fix names it,
  but the requests without the edit are not in the log, so it recovers 0 too;
- ``first-call``, ``below-minimum``, ``hit-increment``: nothing to recover (0): writing new content once is what
  caching costs; a prompt under the model's minimum, or the part of a hit beyond OpenAI's last 128-token step,
  cannot be cached.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, TypedDict

from ._causes import CAUSES
from ._one_model import ONE_MODEL
from ._result_rows import available as _available
from ._result_rows import cost as _cost
from ._result_rows import is_claude_code, is_openai, ttl_choice, ttl_variant

if TYPE_CHECKING:
    from ._engine import ReplayResult

__all__ = ["CauseRow", "cause_rows", "one_model_saving", "ttl_option", "ttl_variant"]


class CauseRow(TypedDict):
    """One miss cause of a row, as ``replay.json``'s ``miss_causes`` lists it (tokens; USD over the log; seconds)."""

    cause: str
    cache_write_tokens: int
    uncached_tokens: int
    cost_usd: float
    recoverable_usd: float | None  # None: the fix is not priced; 0.0: nothing the user controls recovers it
    fix: str | None
    requests: int
    longest_gap_s: float | None
    median_gap_s: float | None


_COMPACTION = (
    "none you control: a compaction replaces the history with its summary, new content written once (the history "
    "it replaced would not fit the context window)"
)
_HIDDEN_CHANGE = (
    "none known: Claude Code changed its own system prompt or tools, which the log records only by size (a changed "
    "MCP server, setting or version); not changing them mid-session avoids the re-write"
)
_EDITED = (
    "keep earlier turns as sent: an earlier message of the thread (or what follows it) was edited, and the cache "
    "holds the prompt only up to the first changed message (add new state after the cached prefix, e.g. right "
    "before the newest turn); the requests without the edit are not in the log, so nothing is priced"
)
_FIX_TEXT = {
    "first-call": "none: new tokens are written once (what caching costs)",
    "model-switch": "stay on one model within a conversation (models do not share a cache)",
    "hit-increment": "none: OpenAI counts cache hits in steps of 128 tokens",
    "unexplained": "none known (an entry the simulator pruned)",
}
#: Causes whose fix recovers nothing (0) rather than being left unpriced.
_NOTHING_TO_RECOVER = ("first-call", "prefix-changed", "below-minimum", "hit-increment")
_PLACEMENT_CAUSES = ("no-cache-point", "cache-point-limit", "lookback")


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


def ttl_option(result: ReplayResult, name: str) -> tuple[str, float] | None:
    """``(fix, saved_usd)``: of row ``name``'s ``@1h`` and ``+keep-alive`` variants, the one that saves more over
    the log (negative: it costs more than it recovers); ``None`` when neither was replayed."""
    choice = ttl_choice(result, name)
    return None if choice is None else (choice[1], choice[2])


def _loss(fix: str, loss_usd: float) -> str:
    """The fix text of a cause whose only priced fix loses money: nothing the user controls recovers it cheaper."""
    return f"none you control recovers it cheaper: {fix} would cost ${loss_usd:,.4f} more over this log"


def cause_rows(result: ReplayResult, name: str) -> list[CauseRow]:
    """The miss causes of row ``name`` with their fix and what it recovers, USD over the log (``recoverable_usd``
    is the row's cost minus the cost of the row with the fix applied; ``None`` where no fix is priced)."""
    causes = result.miss_causes.get(name) or {}
    base = _available(result, name)
    if base is None:
        return []
    logged = base.logged_only
    fixes: dict[str, tuple[str | None, float | None]] = {}
    ttl = ttl_option(result, name)
    if ttl is not None:
        text, saved = ttl
        fixes["ttl-expired"] = (text, saved) if saved >= 0 else (_loss(f"a {text}", -saved), 0.0)
    switch_saving = one_model_saving(result, name)
    if "model-switch" in causes and is_openai(result):  # the one-model variant replays cache points only
        fixes["model-switch"] = ("stay on one model within a conversation (models do not share a cache)", None)
    elif "model-switch" in causes and switch_saving is not None:
        how = (
            "stay on one model within a conversation (replayed on each conversation's first model, its prices "
            "included; models do not share a cache)"
            if name + ONE_MODEL in result.variants
            else "none here: no conversation switches model (another conversation's model cached the prefix)"
        )
        short = "staying on one model within a conversation (prices included)"
        fixes["model-switch"] = (how, switch_saving) if switch_saving >= 0 else (_loss(short, -switch_saving), 0.0)
    placed = [c for c in _PLACEMENT_CAUSES if c in causes]
    cheapest = result.cheapest_placement()
    target = _available(result, cheapest) if cheapest and cheapest != name else None
    saved = base.cost_usd - _cost(target, logged) if target is not None else 0.0
    if placed and target is not None and saved > 0 and not (logged and is_claude_code(result)):
        main = max(placed, key=lambda c: causes[c].cost_usd)
        for c in placed:
            fixes[c] = (f"placement change: {cheapest}", saved) if c == main else (f"see {main}", None)
    for c in placed:  # no placement recovers them: priced at 0, with why
        if logged and is_claude_code(result):
            fixes.setdefault(c, ("none you control: Claude Code places its own cache points", 0.0))
        else:
            fixes.setdefault(c, ("none: no placement here costs less", 0.0))
    if "prefix-changed" in causes:
        fixes["prefix-changed"] = (_prefix_fix(causes["prefix-changed"].kinds), 0.0)
    minimum = result.rules.min_tokens
    fixes.setdefault("below-minimum", (f"none: under the model's minimum ({minimum:,} tokens)", 0.0))
    if is_openai(result) and "ttl-expired" not in fixes:
        fixes["ttl-expired"] = (
            "send related requests within 5 minutes of each other (OpenAI keeps a prefix 5-10 minutes after its "
            "last use; there is no cache point to refresh it)",
            None,
        )
    rows: list[CauseRow] = []
    for cause in CAUSES:
        totals = causes.get(cause)
        if totals is None:
            continue
        fallback = 0.0 if cause in _NOTHING_TO_RECOVER else None
        fix, recoverable = fixes.get(cause, (_FIX_TEXT.get(cause), fallback))
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


def _prefix_fix(kinds: set[str]) -> str:
    """The fix text of ``prefix-changed``: why nothing the user controls recovers it (module docstring), for the
    changes the row met (``kinds``: ``"compaction"``, ``"hidden"``: an unlogged system prompt or tool change,
    ``"edited"``: a call log's thread re-sent with an earlier message changed)."""
    texts = {"compaction": _COMPACTION, "hidden": _HIDDEN_CHANGE, "edited": _EDITED}
    return "; or ".join(texts[k] for k in ("compaction", "hidden", "edited") if k in kinds) or _HIDDEN_CHANGE
