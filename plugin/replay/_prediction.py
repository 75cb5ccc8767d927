"""What a replay says about an ``as-logged`` row it predicted (a Claude Code log without usage).

Without usage the row is Claude Code's own layout (a breakpoint after each cached level of the system/tools prefix
and one on the last message) on estimated sizes, at Claude Code's default 5-minute TTL. Two things that move the
bill are not in such a log, and ``predicted_note`` says so in the report:

- **the TTL**: Claude Code's documentation ("How Claude Code uses prompt caching") gives the main conversation 1
  hour on a Claude subscription within its plan's usage and 5 minutes otherwise (API key, cloud provider, past the
  plan's usage); the transcript records none of that (two sessions of one user, one Claude Code version, 2.1.39:
  one wrote only 1-hour entries, the other only 5-minute ones; bench/README.md "Replay: prediction without
  usage"). The note gives the row at both,
  the 1-hour figure being the row's ``as-logged@1h`` variant (``promptcache.replay._variants``);
- **what the log does not show**: the size of the unlogged system prompt, tools and attached context (the
  replay assumes ``promptcache.replay._sizes.CLAUDE_CODE_CONTEXT_TOKENS``), and what the account's other sessions
  kept cached (the prediction starts each conversation cold; replaying the account's sessions together shares
  one cache timeline).
"""

from __future__ import annotations

from ._engine import ReplayResult
from ._variants import ONE_HOUR

__all__ = ["predicted_note"]


def predicted_note(result: ReplayResult) -> str | None:
    """The report's line for a predicted ``as-logged`` row (``result.as_logged_source == "predicted"``): its bill
    (USD, input side) at 5 minutes and, where the model offers it, at 1 hour; ``None`` for any other row."""
    row = result.strategies.get("as-logged")
    if result.as_logged_source != "predicted" or row is None or row.unavailable:
        return None
    line = (
        f"as logged: predicted (the log records no usage): Claude Code's placement rules on estimated sizes, "
        f"${row.cost_usd:,.4f} at its 5-minute TTL"
    )
    one_hour = result.variants.get("as-logged" + ONE_HOUR)
    if one_hour is not None and not one_hour.unavailable:
        line += f", ${one_hour.cost_usd:,.4f} if the account caches for 1 hour (the log does not say which)"
    return (
        line + "; the unlogged system prompt's size and what the account's other sessions kept cached are not in "
        "the log either."
    )
