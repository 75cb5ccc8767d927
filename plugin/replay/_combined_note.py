"""Why the ``anchored-tail+response-cache`` row is not the recommendation even where it is the cheapest row.

The decision compares prompt-cache placements (``promptcache.replay._decision``). The combined row adds a second,
separate plugin, the ResponseCache, which answers an exact repeat of a request without calling the model; what it
saves depends on how often replies repeat in the traffic, not on where cache points go. Where that row costs less
than the recommended one, the report says so in one line under the decision, with what adding the ResponseCache
would save on top (input side, on the same basis as the decision's saving).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._result_rows import cost, shown_rows
from ._totals import COMBINED

if TYPE_CHECKING:
    from ._decision import Decision
    from ._engine import ReplayResult

__all__ = ["combined_note"]


def combined_note(result: ReplayResult, decision: Decision, on_logged: bool, factor: float | None) -> str | None:
    """The line (module docstring), or ``None`` when the combined row is not shown or not cheaper than the
    recommended row. ``on_logged``: the decision compared the rows on the requests with logged usage; ``factor``
    turns a saving over the log into one per month (``None``: the figure stays over the log)."""
    row = shown_rows(result).get(COMBINED)
    if row is None or row.unavailable:
        return None
    combined = cost(row, on_logged)
    saved = decision.recommended_usd - combined
    if saved <= 0 or f"{saved * (factor or 1.0):,.4f}" == "0.0000":
        return None
    none = result.strategies.get("none")
    base = cost(none, on_logged) if none is not None else 0.0
    share = f" ({combined / base:.1%} of no caching)" if base else ""
    amount = f"${saved * factor:,.2f} per month" if factor is not None else f"${saved:,.4f} over this log"
    rc = result.response_cache
    adding = (
        f"adding it would save a further {amount}"
        if decision.strategy == "anchored-tail"
        else f"anchored-tail with it would save {amount} more than {decision.strategy}"
    )
    return (
        f"{COMBINED}{share} is cheaper but is not the recommendation: it adds the ResponseCache, a separate plugin "
        f"that answers an exact repeat without calling the model, so its saving depends on replies repeating "
        f"({rc.hits:,} of {rc.requests:,} requests here); {adding} (input side)."
    )
