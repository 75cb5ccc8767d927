"""Logged usage that is not token counts, found before it is read.

A logged usage count is a non-negative integer below `MOST_TOKENS` (an integral float such as ``5.0`` is that
integer). A string, a bool, a negative, a huge or a fractional number would read as 0
(`promptcache.replay._logged_usage`) and bend the as-logged bill silently, and so would an OpenAI usage whose cached
part exceeds its prompt. A record with such usage keeps no usage: inside a skipping block it is counted in the
skipped-lines tally with its reason (one warning for the run, `promptcache.replay._skipped`); outside it
(``--strict``) it is a ``TranscriptError`` naming the file, the line and the field.

Every count a reader takes goes through `read_count` (``promptcache.replay._logged_usage.count_of``), which notes
the first bad one of the record inside ``watching_counts``; the readers (``promptcache.replay._formats.read_with``
for the record-by-record formats, the Bedrock and stream-json readers through `usage_read`) then report it as
above. The shapes also checked whole, before reading (so the named field is the full path): OpenAI Chat Completions ``usage`` (``prompt_tokens``, ``completion_tokens``,
``prompt_tokens_details.cached_tokens``) and Responses ``usage`` (``input_tokens``, ``output_tokens``,
``input_tokens_details.cached_tokens``); Langfuse ``usageDetails`` / ``usage`` (every usage type is a count).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from ._bad_record import _short
from ._skipped import current_tally
from ._transcript import TranscriptError

__all__ = [
    "bad_count",
    "count_problem",
    "huge_usage",
    "langfuse_usage_problem",
    "openai_usage_problem",
    "read_count",
    "report_usage",
    "usage_read",
    "watching_counts",
]

_OPENAI_SHAPES = (
    ("prompt_tokens", "completion_tokens", "prompt_tokens_details"),
    ("input_tokens", "output_tokens", "input_tokens_details"),
)

#: One more than the largest logged token count: 2**32 is over 4,000 times the largest context window in the model
#: table (1M tokens), so no call's count is refused, and sums of counts below it over any input within the replay's
#: input limits stay below 2**63, where the JSON report's integers end. Readers that check no usage fields check the
#: `Usage` they read (`huge_usage`).
MOST_TOKENS = 2**32


def huge_usage(usage: object) -> str | None:
    """Why a read ``Usage`` (or ``None``) holds a count of `MOST_TOKENS` or more; ``None``: it does not."""
    for key in ("input_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens", "output_tokens"):
        value = getattr(usage, key, 0)
        if value >= MOST_TOKENS:
            return bad_count(f"usage {key}", value)
    return None


def count_problem(value: object) -> bool:
    """Whether ``value`` is present and not a token count (module docstring); absent (``None``) is a count of 0."""
    if value is None:
        return False
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return not 0 <= value < MOST_TOKENS
    if isinstance(value, float):
        return not (math.isfinite(value) and value.is_integer() and 0 <= value < MOST_TOKENS)
    return True


#: What a token count is, as the messages about one say.
A_COUNT = f"a token count (an integer from 0 to {MOST_TOKENS - 1:,})"


def bad_count(field: str, value: object) -> str:
    """``"FIELD must be a token count (an integer from 0 to 4,294,967,295), got VALUE"``."""
    return f"{field} must be {A_COUNT}, got {_short(value)}"


_U = TypeVar("_U")

#: The first count problem seen inside the innermost ``watching_counts`` block (``None``: outside every block).
_SEEN: ContextVar[list[str] | None] = ContextVar("promptcache_replay_bad_counts", default=None)


def read_count(obj: object, key: str) -> int:
    """The token count ``obj[key]`` (0 when absent, ``null`` or ``obj`` is not an object): every reader's one check.

    A present value that is not a count (`count_problem`: a string, a bool, a negative, a fractional number, or
    `MOST_TOKENS` or more) reads as 0 and is noted in the enclosing ``watching_counts`` block as
    ``"KEY must be a token count (an integer from 0 to 4,294,967,295), got VALUE"`` (`bad_count`), so the reader drops the record's usage and says
    so (`report_usage`) instead of billing it as 0.
    """
    value = obj.get(key) if isinstance(obj, dict) else None
    if value is None:
        return 0
    if count_problem(value):
        seen = _SEEN.get()
        if seen is not None and not seen:
            seen.append(bad_count(key, value))
        return 0
    return int(value)  # an int or an integral float: count_problem checked it


@contextmanager
def watching_counts() -> Iterator[list[str]]:
    """Within the block, `read_count` notes the first value that is not a token count in the yielded list (empty:
    every count read was valid)."""
    seen: list[str] = []
    token = _SEEN.set(seen)
    try:
        yield seen
    finally:
        _SEEN.reset(token)


def openai_usage_problem(usage: object, where: str) -> str | None:
    """Why the OpenAI ``usage`` object at ``where`` (e.g. ``"response.usage"``) is not token counts; ``None``:
    it is, or it is not an object of either OpenAI shape."""
    if not isinstance(usage, dict):
        return None
    for prompt_key, output_key, details_key in _OPENAI_SHAPES:
        if prompt_key not in usage:
            continue
        for key in (prompt_key, output_key):
            if count_problem(usage.get(key)):
                return bad_count(f"{where}.{key}", usage.get(key))
        details = usage.get(details_key)
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        if count_problem(cached):
            return bad_count(f"{where}.{details_key}.cached_tokens", cached)
        prompt = usage.get(prompt_key) or 0
        if cached is not None and cached > prompt:
            return (
                f"{where}.{details_key}.cached_tokens ({_short(cached)}) exceeds {where}.{prompt_key} "
                f"({_short(prompt)}): the cached part is part of the prompt"
            )
        return None
    return None


def langfuse_usage_problem(details: object, where: str) -> str | None:
    """Why the Langfuse usage object at ``where`` (``"usageDetails"`` / ``"usage"``) is not token counts: every
    usage type must be a count (an OpenAI-shaped object is checked as OpenAI's); ``None``: it is."""
    if not isinstance(details, dict):
        return None
    if any(key in details for key, _, _ in _OPENAI_SHAPES) and "input" not in details:
        return openai_usage_problem(details, where)
    for key, value in details.items():
        if count_problem(value):
            return bad_count(f"{where}.{key}", value)
    return None


def usage_read(read: Callable[[], _U], name: str, lineno: int) -> _U | None:
    """``read()`` (a reader's usage of line ``lineno`` of ``name``), or ``None`` when a count it read was not a
    token count (`read_count`), which is then reported (`report_usage`; ``--strict``: raises its
    ``TranscriptError``)."""
    with watching_counts() as seen:
        usage = read()
    if not seen:
        return usage
    report_usage(name, lineno, seen[0])
    return None


def report_usage(name: str, lineno: int, problem: str) -> None:
    """Record that line ``lineno`` of ``name`` keeps no usage because of ``problem`` (module docstring).

    Raises:
        TranscriptError: outside a skipping block (``--strict``): ``name:lineno: problem``.
    """
    tally = current_tally()
    if tally is None:
        raise TranscriptError(name, lineno, problem)
    tally.add(name, lineno, problem, kind="usage")
