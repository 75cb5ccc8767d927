"""The TTL the log's own layout wrote its cache entries with, and the placement rows it is compared with.

A comparison with the ``as-logged`` row is one of placement only where both sides write at the same TTL (a 1-hour
write costs more than a 5-minute one, and lives longer). The log's own TTL is **uniform** where it wrote every
cache-write token at one TTL (``uniform_ttl``; the log's bill says so where it logs usage, else the simulated
``as-logged`` row): every token at 1 hour, and the placements it is compared with are their ``@1h`` rows; none at
1 hour, and they are the plain (5-minute) rows.
Where the layout wrote some tokens at each TTL (``mixed_ttl``: a Claude Code session whose main conversation
writes 1-hour entries and whose subagents write 5-minute ones) no row of ours writes with the same TTL on the
same points, so the comparison is made at both TTLs, the split is given and the words say that part of each
difference is TTL, not placement (``mixed_words``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ._result_rows import available

if TYPE_CHECKING:
    from ._engine import ReplayResult
    from ._totals import StrategyTotals

__all__ = ["PLACEMENTS", "TtlSplit", "mixed_ttl", "mixed_words", "same_ttl_placement", "uniform_ttl"]

PLACEMENTS = ("anchored-tail", "langchain-aws", "multi-point", "last-message")  # ours first on a tie
_ONE_HOUR = "@1h"


class TtlSplit(NamedTuple):
    """Cache-write tokens of the log's own layout: at 1 hour (``long``), in all (``every``), and whether they are
    the log's billed figures (``billed``) or the simulated ``as-logged`` row's."""

    long: int
    every: int
    billed: bool


def _split(result: ReplayResult) -> TtlSplit | None:
    """The log's own cache-write split: its bill where every request the ``as-logged`` row covers logged usage
    (``as_logged_source == "logged"``), else the simulated row's (a predicted row: the log has no usage, or not on
    every request); ``None`` where there is no as-logged row."""
    bill = result.logged
    if result.as_logged_source == "logged" and bill is not None:
        return TtlSplit(bill.write_1h_tokens, bill.write_tokens, True)
    row = result.strategies.get("as-logged")
    if row is None or row.unavailable:
        return None
    return TtlSplit(row.write_1h_tokens, row.write_tokens, False)


def uniform_ttl(result: ReplayResult) -> float | None:
    """3600.0 where the log's own layout wrote every cache-write token at 1 hour, 300.0 where it wrote none at
    1 hour; ``None`` where it wrote nothing or mixed the TTLs (``mixed_ttl``). The split is the log's bill where it
    has one (``_split``)."""
    split = _split(result)
    if split is None or not split.every:
        return None
    if split.long >= split.every:
        return 3600.0
    return 300.0 if not split.long else None


def mixed_ttl(result: ReplayResult) -> TtlSplit | None:
    """The cache-write split of the log's own layout where it wrote some tokens at each TTL, else ``None``."""
    split = _split(result)
    if split is None or not 0 < split.long < split.every:
        return None
    return split


def mixed_words(split: TtlSplit) -> str:
    """``"the log mixes TTLs (as billed: 451,589 of 829,208 cache-write tokens, 54.5%, at 1 hour, the rest at
    5 minutes), so part of the difference is TTL, not placement"``; ``"the log's layout mixes TTLs (as simulated:
    ..."`` where the split is the simulation's (``TtlSplit.billed`` false)."""
    long, every, billed = split
    who, source = ("the log", "as billed") if billed else ("the log's layout", "as simulated")
    return (
        f"{who} mixes TTLs ({source}: {long:,} of {every:,} cache-write tokens, {long / every:.1%}, at 1 hour, the "
        "rest at 5 minutes), so part of the difference is TTL, not placement"
    )


def same_ttl_placement(result: ReplayResult) -> tuple[str | None, StrategyTotals | None, str]:
    """The placement the log's own layout is compared with, its row, and the words that say at which TTL:

    - a uniform 1-hour layout: the cheapest ``@1h`` placement, ``" at the same 1-hour TTL"``;
    - a mixed layout: the cheapest placement at either TTL (an agent of your own sets its TTL), with its TTL and
      the split (``mixed_words``);
    - otherwise the cheapest placement (``ReplayResult.cheapest_placement``), no words.

    ``(None, None, "")`` when the run compared no placement."""
    long = [(r.cost_usd, n) for n in PLACEMENTS if (r := available(result, n + _ONE_HOUR)) is not None]
    name = result.cheapest_placement()
    row = result.strategies.get(name or "")
    if uniform_ttl(result) == 3600.0 and long:
        best = min(long)[1]
        return best, result.variants[best + _ONE_HOUR], " at the same 1-hour TTL"
    split = mixed_ttl(result)
    if split is not None and row is not None and name is not None:
        if long and min(long)[0] < row.cost_usd:
            best = min(long)[1]
            return best, result.variants[best + _ONE_HOUR], f" at the 1-hour TTL; {mixed_words(split)}"
        return name, row, f" at the 5-minute TTL; {mixed_words(split)}"
    return (name, row, "") if row is not None else (None, None, "")
