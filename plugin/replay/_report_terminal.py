"""The terminal the report is printed on, and the report's plain-language paragraphs that need no table.

- ``terminal_console()``: a rich ``Console`` as wide as the terminal (``shutil.get_terminal_size``: ``COLUMNS``
  where set, else the terminal's width, else 80 columns) whose lines carry no trailing spaces (rich pads centred
  titles and leaves the space where it wraps a line). Off a terminal (stdout piped to a file, a log, CI) it is
  ``COLUMNS`` wide where that is set, else ``PIPED_WIDTH``: nothing is wrapped, so each table row is one line
  and each paragraph too (80 columns, rich's default there, folds the tables' rows).
- ``intention_paragraph(result)``: what the intention cache would have done on the log, ending with whether to use
  it.
"""

from __future__ import annotations

import os
import re
import shutil
from typing import IO, TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from ._engine import ReplayResult

__all__ = ["MIN_WIDTH", "PIPED_WIDTH", "intention_paragraph", "terminal_console"]

#: Narrowest report (columns): the strategy table's seven columns of figures need about this much before rich would
#: fold a figure across lines; a narrower terminal gets this width (and wraps it itself).
MIN_WIDTH = 60
#: Width (columns) of the report off a terminal without ``COLUMNS``: wider than any line of it (a paragraph is a few
#: hundred characters), so nothing is wrapped.
PIPED_WIDTH = 10_000
_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)(?=\n)")
_TAIL = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$")


class _Trimmed:
    """A text stream that drops the spaces before each line break (ANSI style codes there are kept); spaces at
    the end of one write are held until the next shows whether a line break follows."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._held = ""

    def write(self, text: str) -> int:
        text = _TRAILING.sub(r"\1", self._held + text)
        tail = _TAIL.search(text)
        self._held = tail.group(0) if tail else ""
        if tail:
            text = text[: tail.start()]
        self._stream.write(text)
        return len(text)

    def flush(self) -> None:
        if self._held:
            self._stream.write(self._held.lstrip(" \t"))  # the codes, not the spaces
            self._held = ""
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self._stream, "encoding", "utf-8") or "utf-8"


def terminal_console(stream: IO[str] | None = None) -> Console:
    """A console for the report on ``stream`` (stdout by default): as wide as the terminal, at least ``MIN_WIDTH``
    columns, and without trailing spaces; off a terminal, ``COLUMNS`` wide where set, else unwrapped
    (``PIPED_WIDTH``)."""
    import sys

    target = stream or sys.stdout
    if _is_terminal(target) or _columns() is not None:
        width = max(shutil.get_terminal_size().columns, MIN_WIDTH)
    else:
        width = PIPED_WIDTH
    # emoji off: ":x:" in a model id or a path is text
    return Console(file=_Trimmed(target), width=width, emoji=False)  # type: ignore[arg-type]


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):  # a closed or file-like stream without one
        return False


def _columns() -> int | None:
    """``COLUMNS`` when it is a positive whole number (as ``shutil.get_terminal_size`` reads it), else ``None``."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return columns if columns > 0 else None


def intention_paragraph(result: ReplayResult) -> str:
    """The intention cache on this log: the calls that repeat earlier ones, what ``serve_repeats`` and
    ``retrieve_memory`` would have done with them, and whether to use it (``promptcache.replay._intentions``)."""
    it = result.intention
    setting = f"IntentionMemory in memory, threshold {it.threshold:g}, margin {it.margin:g}, TTL {it.ttl_s:g} s"
    if not it.tool_calls:
        return f"Intention cache ({setting}): the log records no tool calls, so there is nothing for it to answer."
    calls = "call" if it.tool_calls == 1 else "calls"
    verb = "repeats" if it.same_call_repeats == 1 else "repeat"
    repeats = (
        f"{it.same_call_repeats:,} call{'' if it.same_call_repeats == 1 else 's'} {verb} an earlier successful call "
        f"of the same user (same tool and arguments, at any distance; {it.same_call_repeats_changed:,} of them with "
        "a changed result)"
    )
    served = (
        f"serve_repeats would have answered {it.served:,} without running the tool (it needs the same intention "
        f"too, within the TTL"
        + (f"; {it.served_stale:,} of them with a result that changed since)" if it.served else ")")
    )
    if not it.answered:
        found = "retrieve_memory found nothing stored for any call"
    elif not it.right:
        found = (
            f"retrieve_memory found stored results for {it.answered:,} call{'' if it.answered == 1 else 's'} "
            f"({it.exact:,} by the exact intention, {it.similar:,} by a similar one), but each was the result of "
            "another call (another tool or other arguments, filed under the same or a similar intention), never the "
            "one the call needed, so it would have saved no call; calls that share an intention (by default the "
            "latest user message) are told apart only by an intention argument of their own that names what each "
            "call fetches"
        )
    else:
        found = (
            f"retrieve_memory found stored results for {it.answered:,} ({it.exact:,} by the exact intention, "
            f"{it.similar:,} by a similar one): {it.right:,} with the call's own result ({it.right_stale:,} of them "
            f"changed since) and {it.wrong:,} with other calls' results only"
        )
    useful = max(it.served, it.right)  # a call can be both: counted once at least
    if not useful:
        verdict = "Use it? Not on this traffic: it would have answered no call with its own result."
    elif it.wrong > it.right and not it.served:
        verdict = (
            f"Use it? Not on this traffic: it would have answered more calls with other calls' results ({it.wrong:,}) "
            f"than with their own ({it.right:,})."
        )
    else:
        verdict = (
            f"Use it? It pays here if tool calls are slow or costly: it would have answered {useful:,} of "
            f"{it.tool_calls:,} tool calls with their own result."
        )
    return f"Intention cache ({setting}): of {it.tool_calls:,} tool {calls}, {repeats}; {served}; {found}. {verdict}"
