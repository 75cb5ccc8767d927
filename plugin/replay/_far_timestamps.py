"""Timestamps far outside the rest of their log, set aside so that no one record sets the log's time span.

The monthly rate of a replay divides the saving by the log's span, first request to last
(`promptcache.replay._monthly_rate`); one corrupted time (``9999-12-31``, ``0001-01-01``, epoch ``1e300``) would
make that span centuries long and the monthly figure 0, silently. A message's timestamp is set aside (the message
is then untimed, spaced like any untimed one) when, among the distinct times of its file:

- it is before the epoch or after the last second of year 9999 (``[EARLIEST, LATEST)``): no log is written before
  1970, and no calendar date is later (a synthetic log's small epoch times, ``100.0``, stay); or
- it is the earliest or the latest, and its gap to the next one is over ``FAR_GAP_S`` (30 days) and over
  ``FAR_FACTOR`` (10) times the span of all the others: the others were logged as calls were made, close
  together, and one time apart from all of them by ten times their whole span is a clock fault or a corrupted
  field rather than a session. Applied again to the times left, from both ends, while at least three remain.

The file's conversations keep every message; one ``TranscriptWarning`` per file says how many times were set aside
and the first of them. Every reader's file passes through it: ``readers.read_file`` on what it read whole, and
``promptcache.replay._stream`` on a JSONL file of one conversation per line, whose times it collects in a first
pass over the file (a float a message), so the conversations are still held one at a time.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from datetime import datetime, timezone

from ._transcript import Conversation, TranscriptWarning

__all__ = [
    "EARLIEST",
    "FAR_FACTOR",
    "FAR_GAP_S",
    "LATEST",
    "clear_far_timestamps",
    "drop_far_timestamps",
    "far_times",
    "warn_far_timestamps",
]

#: 1970-01-01T00:00:00Z and 10000-01-01T00:00:00Z, epoch seconds (module docstring).
EARLIEST, LATEST = 0.0, 253_402_300_800.0
#: Module docstring: a lone time is far when its gap is over 30 days and over ten times the others' span.
FAR_GAP_S, FAR_FACTOR = 30 * 86_400.0, 10.0


def far_times(times: Sequence[float]) -> set[float]:
    """The times of one log that are far outside the rest (module docstring); ``times`` in seconds, any order."""
    far = {t for t in times if not EARLIEST <= t < LATEST}  # (NaN fails the comparison too)
    left = sorted({t for t in times if t not in far})
    while len(left) >= 3:
        if _lone(left[-1] - left[-2], left[-2] - left[0]):
            far.add(left.pop())
        elif _lone(left[1] - left[0], left[-1] - left[1]):
            far.add(left.pop(0))
        else:
            break
    return far


def _lone(gap: float, rest: float) -> bool:
    return gap > FAR_GAP_S and gap > FAR_FACTOR * rest


def _shown(stamp: float) -> str:
    try:
        return datetime.fromtimestamp(stamp, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return f"{stamp:g} s after the epoch"


def drop_far_timestamps(name: str, conversations: Sequence[Conversation]) -> None:
    """Clear, in place, the message timestamps of ``conversations`` (one file, ``name``) that are far outside the
    rest (module docstring), with one ``TranscriptWarning`` naming the file, the count and the first."""
    times = [m.timestamp for c in conversations for m in c.messages if m.timestamp is not None]
    far = warn_far_timestamps(name, times, stacklevel=4)
    for conv in conversations if far else ():
        clear_far_timestamps(conv, far)


def warn_far_timestamps(name: str, times: Sequence[float], stacklevel: int = 3) -> set[float]:
    """``far_times(times)`` for the timestamps of one file (``name``), in the order of its messages, with the one
    ``TranscriptWarning`` of ``drop_far_timestamps`` when any is far (for a reader that streams the file and
    clears each conversation with ``clear_far_timestamps`` as it goes)."""
    far = far_times(times)
    if not far:
        return far
    flagged = [t for t in times if t in far or t != t]  # (NaN is never equal to itself)
    kept = len(times) - len(flagged)
    warnings.warn(
        f"{name}: ignored {len(flagged):,} timestamp{'' if len(flagged) == 1 else 's'} far outside the rest of the "
        f"log (first: {_shown(flagged[0])}; {kept:,} kept); those messages are replayed as untimed, so they do not "
        "set the log's time span",
        TranscriptWarning,
        stacklevel=stacklevel,
    )
    return far


def clear_far_timestamps(conv: Conversation, far: set[float]) -> None:
    """Clear, in place, the message timestamps of ``conv`` that are in ``far`` (``warn_far_timestamps``)."""
    for message in conv.messages:
        stamp = message.timestamp
        if stamp is not None and (stamp in far or stamp != stamp):
            message.timestamp = None
