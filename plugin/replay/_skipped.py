"""Broken lines of a JSONL log, skipped and counted instead of stopping the replay.

Real logs are messy: a redaction tool or a crash can leave a line that is not valid JSON among thousands of good
ones. Inside ``skipping(tally)`` every JSONL reader (through ``promptcache.replay._jsonpos.jsonl_records``) skips
such a line, records it in ``tally`` and goes on; outside it (the default, and ``promptcache replay --strict``) the
first broken line is a ``TranscriptError``. A file's first non-blank line is never skipped (a file that does not
start with a record is not a JSONL log at all), and a file where broken lines outnumber good ones is an error
naming its first broken line (most of it is not JSON: not a log).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["SkippedLines", "current_tally", "skipping"]


@dataclass
class SkippedLines:
    """What the readers skipped.

    Attributes:
        count: broken lines skipped (not valid JSON), over every file.
        first: ``"FILE:LINE"`` of the first one skipped (``None``: none).
        first_reason: the parser's message for that line.
        per_file: file name -> lines skipped in it, in reading order.
        bad_usage: lines whose ``usage`` held a value that is not a token count; their usage was not read (every
            reader: `promptcache.replay._usage_checks`, and for Claude Code logs
            `promptcache.replay._claude_code_checks`).
        bad_usage_first / bad_usage_reason: ``"FILE:LINE"`` and reason of the first such line.
    """

    count: int = 0
    first: str | None = None
    first_reason: str = ""
    per_file: dict[str, int] = field(default_factory=dict)
    bad_usage: int = 0
    bad_usage_first: str | None = None
    bad_usage_reason: str = ""

    def add(self, name: str, line: int, reason: str, kind: str = "json") -> None:
        """Record one skipped line ``line`` (1-based) of file ``name``: ``kind`` ``"json"`` (not valid JSON) or
        ``"usage"`` (its usage not read).

        Raises:
            ValueError: an unknown ``kind``.
        """
        if kind == "usage":
            self.bad_usage += 1
            if self.bad_usage_first is None:
                self.bad_usage_first, self.bad_usage_reason = f"{name}:{line}", reason
            return
        if kind != "json":
            raise ValueError(f"kind must be 'json' or 'usage', got {kind!r}")
        self.count += 1
        self.per_file[name] = self.per_file.get(name, 0) + 1
        if self.first is None:
            self.first, self.first_reason = f"{name}:{line}", reason

    def warning(self) -> str | None:
        """The one-line summary of the lines that are not valid JSON (``None`` when there was none)."""
        if not self.count:
            return None
        files = len(self.per_file)
        where = f" in {files} files" if files > 1 else ""
        return (
            f"{self.first}: skipped {_lines(self.count)} {'that is' if self.count == 1 else 'that are'} not valid JSON{where} (first here: {self.first_reason}); use "
            "--strict to stop at the first one"
        )

    def warnings(self) -> list[str]:
        """The command's summary lines: `warning` (broken JSON), then one for lines whose usage was not read."""
        lines = [w for w in (self.warning(),) if w]
        if self.bad_usage:
            lines.append(
                f"{self.bad_usage_first}: read {_lines(self.bad_usage)} without {'its' if self.bad_usage == 1 else 'their'} "
                f"usage, which is not token counts (first here: {self.bad_usage_reason}); use --strict to stop at the first one"
            )
        return lines


def _lines(count: int) -> str:
    """``"1 line"`` / ``"1,234 lines"``."""
    return f"{count:,} line" if count == 1 else f"{count:,} lines"


_TALLY: ContextVar[SkippedLines | None] = ContextVar("promptcache_replay_skipped_lines", default=None)


def current_tally() -> SkippedLines | None:
    """The tally of the enclosing ``skipping`` block, ``None`` outside one (broken lines are errors)."""
    return _TALLY.get()


@contextmanager
def skipping(tally: SkippedLines) -> Iterator[SkippedLines]:
    """Within the block, JSONL readers skip broken lines into ``tally`` (module docstring)."""
    token = _TALLY.set(tally)
    try:
        yield tally
    finally:
        _TALLY.reset(token)
