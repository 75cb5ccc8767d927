"""When a replay's simulated figures cannot carry a decision, and what the decision paragraph says about it.

``unreliable(result)``: the simulation does not reproduce the log's own bill. The ``as-logged`` row re-prices the
log's own layout; where it lands further from the billed cost than ``BILL_TOLERANCE`` the simulator is not
modelling this log's cache (entries written before the log starts or by traffic not in it, prompts that differ
from what the log records, a provider rule it does not know), and every other row, simulated the same way, is no
better. The decision then claims no row is cheapest and says why, in the sentence and in replay.json
(``decision.reliable``, ``decision.unreliable``).

``predicted_caveat(result)``: the ``as-logged`` row was predicted (a log without usage, ``as_logged_source ==
"predicted"``): the decision paragraph says so and names the assumptions that can change the advice: the TTL
(Claude Code's 5-minute default against the 1 hour a Claude subscription gets), the unlogged system prompt's
size, and what the account's other sessions kept cached.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._as_logged import TOLERANCE
from ._result_rows import is_claude_code
from ._variants import ONE_HOUR

if TYPE_CHECKING:
    from ._as_logged import LoggedTotals
    from ._engine import ReplayResult
    from ._totals import StrategyTotals

__all__ = ["BILL_TOLERANCE", "predicted_caveat", "unreliable"]

#: Largest share by which the simulated ``as-logged`` bill may differ from the logged one before the simulated rows
#: are called unreliable: the replay's own per-call tolerance (``promptcache.replay._as_logged.TOLERANCE``, 5%),
#: applied to the whole bill. It is the bar the Claude Code sessions in the shared data meet replayed alone
#: (bench/README.md, "Replay: fidelity"), and a difference between placements smaller than the simulator's own
#: error is already not acted on (``promptcache.replay._decision``), so past it no difference is shown to pay.
BILL_TOLERANCE = TOLERANCE


def unreliable(result: ReplayResult) -> str | None:
    """Why the simulated rows of ``result`` are unreliable (a clause for the decision sentence), or ``None`` when
    the simulation reproduces the log's bill within ``BILL_TOLERANCE`` or the log has no bill to compare with."""
    fid, bill = result.fidelity, result.logged
    row = result.strategies.get("as-logged")
    if fid is None or fid.cost_difference is None or bill is None or row is None or row.unavailable:
        return None
    if result.as_logged_source == "predicted" or result.billed_mismatch() is not None:
        return None
    if abs(fid.cost_difference) <= BILL_TOLERANCE:
        return None
    why = _why(bill.read_tokens, row.read_tokens, bill, row)
    return (
        f"the simulation does not reproduce this log's bill: its as-logged row costs ${fid.simulated_usd:,.4f} "
        f"against ${fid.logged_usd:,.4f} billed ({fid.cost_difference:+.2%}, beyond the {BILL_TOLERANCE:.0%} the "
        f"replay holds itself to), because {why}"
    )


def _why(billed_read: int, read: int, bill: LoggedTotals, row: StrategyTotals) -> str:
    """What the bill has against the simulation, as a clause: its cache reads and writes, and the likelier cause
    (reads the simulation cannot make: entries from before the log; else prompts, cache points or TTLs)."""
    hour = (
        f" ({bill.write_1h_tokens:,} against {row.write_1h_tokens:,} at the 1-hour TTL)"
        if bill.write_1h_tokens or row.write_1h_tokens
        else ""
    )
    if billed_read > read * (1 + TOLERANCE):
        likely = "entries written before the log starts, or by traffic not in it"
    elif billed_read < read * (1 - TOLERANCE):
        likely = "entries that expired or were evicted sooner, or prompts that differ from what the log records"
    else:
        likely = "prompts, cache points or TTLs that differ from what the log records"
    return (
        f"the bill reads {billed_read:,} cache tokens and writes {bill.write_tokens:,}{hour} where the simulation "
        f"reads {read:,} and writes {row.write_tokens:,} ({likely})"
    )


def unreliable_sentence(reason: str) -> str:
    """The decision sentence where the simulated rows are unreliable (``reason`` from ``unreliable``)."""
    return (
        f"No recommendation from this log: {reason}. Every simulated row is unreliable here, so none is shown to "
        "be cheapest; keep what you have until a replay of this traffic reproduces its bill (a log from the cache's "
        "first write, with every call that shares it)."
    )


def predicted_caveat(result: ReplayResult) -> str | None:
    """The decision paragraph's line for a predicted ``as-logged`` row, or ``None`` (the row is billed)."""
    row = result.strategies.get("as-logged")
    if result.as_logged_source != "predicted" or row is None or row.unavailable:
        return None
    none = result.strategies.get("none")
    base = none.cost_usd if none is not None and none.cost_usd else 0.0

    def share(usd: float) -> str:
        return f"{usd / base:.1%} of no caching" if base else f"${usd:,.4f}"

    client, ttl = (
        ("Claude Code's", "at its 5-minute TTL") if is_claude_code(result) else ("the client's", "at a 5-minute TTL")
    )
    one_hour = result.variants.get("as-logged" + ONE_HOUR)
    at_1h = ""
    if one_hour is not None and not one_hour.unavailable:
        at_1h = f" ({share(one_hour.cost_usd)} at the 1 hour a Claude subscription within its plan gets)"
    return (
        f"The as-logged row is predicted, not billed: the log records no usage, so it is {client} placement "
        f"rules on estimated sizes, {share(row.cost_usd)} {ttl}. What can change the advice: the TTL the account "
        f"really gets{at_1h}, the size of the system prompt and tools the log does not record, and what the "
        "account's other sessions kept cached (replay them together to share one cache)."
    )
