"""The rate a replay's savings are turned into per month at (``month_factor``).

``monthly-requests``: the caller's monthly volume, the saving per request times it. ``log-span``: the saving over
the log divided by its time span (first request to last) times 30 days, and the words say both (``"156 requests
over 70 minutes; a month at that rate = x620.7"``), so runs over different spans of the same traffic compare; ``assumed-gap`` the same where requests
carry no timestamps, so the span is itself assumed (they are ``--gap-s`` apart). ``span-too-short``: a span under
``MIN_SPAN_S`` supports no monthly figure; the saving is given over the log and the caller asked for a volume.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._engine import ReplayResult

__all__ = ["MIN_SPAN_S", "MONTH_S", "duration", "month_factor"]

MONTH_S = 30 * 86_400.0
#: Shortest time span (seconds) a log's rate is extrapolated to a month from: one hour, the longest cache lifetime
#: the providers offer (Anthropic's 1-hour TTL, "Prompt caching", docs.claude.com; OpenAI: "up to a maximum of one
#: hour", developers.openai.com/api/docs/guides/prompt-caching). Over a shorter span every entry the log wrote may
#: still be alive at its end and no reuse after an entry's lifetime is seen: the log holds the cache's start-up
#: (its first writes), not the balance of writes and reads that a month of the traffic repeats.
MIN_SPAN_S = 3600.0


def month_factor(result: ReplayResult, requests: int) -> tuple[float | None, str, str | None]:
    """``(factor, basis, rate_source)``: what turns a saving over the log (of ``requests`` requests) into one per
    month (module docstring); ``factor`` is ``None`` when the log gives no monthly rate (``"span-too-short"``)."""
    monthly = result.monthly_requests
    if monthly:
        return monthly / requests if requests else None, f"at {monthly:,} requests per month", "monthly-requests"
    untimed = result.untimed_requests
    some = "" if untimed >= result.requests else f"{untimed:,} of "
    if result.span_s < MIN_SPAN_S:
        if result.span_s <= 0:
            spans = "the log spans no time"
        elif untimed:
            spans = f"{some}{requests:,} requests carry no timestamps: {result.gap_s:g} s apart they span {duration(result.span_s)}"
        else:
            spans = f"its {requests:,} requests span {duration(result.span_s)}"
        return (
            None,
            f"{spans}, under the hour a monthly figure needs; pass --monthly-requests N for your volume",
            "span-too-short",
        )
    factor = MONTH_S / result.span_s
    times = f"a month at that rate = x{factor:,.1f}"
    if untimed:
        return (
            factor,
            f"at an assumed {result.gap_s:g} s between calls ({some}{requests:,} requests carry no timestamps; so "
            f"spaced the log spans {duration(result.span_s)}; {times}; pass --monthly-requests N for your volume)",
            "assumed-gap",
        )
    return factor, f"at this log's rate ({requests:,} requests over {duration(result.span_s)}; {times})", "log-span"


def duration(seconds: float) -> str:
    """``seconds`` as the report words a span: days, hours, minutes or seconds."""
    if seconds >= 2 * 86_400:
        return f"{seconds / 86_400:.1f} days"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.1f} hours"
    if seconds >= 120:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds:.0f} second{'' if round(seconds) == 1 else 's'}"
