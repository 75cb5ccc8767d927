"""What a replay's rows say, for the decision and the miss-cause fixes: a row if it ran, its cost on the compared
requests, and which kind of log the run was (Claude Code, OpenAI)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._engine import ReplayResult, StrategyTotals

__all__ = ["available", "cost", "is_claude_code", "is_openai"]


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


def cost(row: StrategyTotals, logged: bool) -> float:
    """The row's input-side USD on the compared requests (``logged``: those with logged usage)."""
    return row.logged_cost_usd if logged and not row.logged_only else row.cost_usd
