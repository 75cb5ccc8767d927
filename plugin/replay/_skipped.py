"""Broken lines of a JSONL log, skipped and counted instead of stopping the replay.

Real logs are messy: a redaction tool or a crash can leave a line that is not valid JSON among thousands of good
ones. Inside ``skipping(tally)`` every JSONL reader (through ``promptcache.replay._jsonpos.jsonl_records``) skips
such a line, records it in ``tally`` and goes on; outside it (the default, and ``promptcache replay --strict``) the
first broken line is a ``TranscriptError``. A file's first non-blank line is never skipped (a file that does not
start with a record is not a JSONL log at all), and a file where broken lines outnumber good ones is an error
naming its first broken line (most of it is not JSON: not a log).

Only a broken line that held an API call can change the bill, so each is counted by the record type its text reads
before the break (``record_type``): the record's top-level ``"type"``, else (Claude Code writes an assistant
record's ``type`` after its ``message``) its ``message``'s ``"role"``, else ``"unknown"``. An ``assistant`` record
is an API call's reply (in a Claude Code log, with its usage); ``user``, ``system`` (an ``api_error`` record, say)
and the rest are not.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["API_CALL_TYPE", "SkippedLines", "current_tally", "record_type", "skipping"]

#: The record type of an API call's reply (Claude Code, Claude Code stream-json).
API_CALL_TYPE = "assistant"
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]')


def record_type(before: str) -> str:
    """The record type the text ``before`` a line's break reads (module docstring): the top-level ``"type"``
    string, else the ``"role"`` string of the top-level ``"message"`` object, else ``"unknown"``."""
    tokens = [m.group() for m in _TOKEN.finditer(before)]
    open_: list[tuple[str, str | None]] = []  # per open container: its bracket and the key it is the value of
    key: str | None = None
    role: str | None = None
    for i, tok in enumerate(tokens):
        if tok in ("{", "["):
            open_.append((tok, key))
            key = None
        elif tok in ("}", "]"):
            if open_:
                open_.pop()
            key = None
        elif tok == ",":
            key = None
        elif tok.startswith('"'):
            in_object = bool(open_) and open_[-1][0] == "{"
            if in_object and key is None and i + 1 < len(tokens) and tokens[i + 1] == ":":
                key = tok[1:-1]
                continue
            if key == "type" and len(open_) == 1 and in_object:
                return tok[1:-1] or "unknown"
            if key == "role" and len(open_) == 2 and in_object and open_[-1][1] == "message" and role is None:
                role = tok[1:-1]
    return role or "unknown"


@dataclass
class SkippedLines:
    """What the readers skipped.

    Attributes:
        count: broken lines skipped (not valid JSON), over every file.
        first: ``"FILE:LINE"`` of the first one skipped (``None``: none).
        first_reason: the parser's message for that line.
        per_file: file name -> lines skipped in it, in reading order.
        types: record type (``record_type``) -> broken lines of it, most first when read by ``warning``.
        bad_usage: lines whose ``usage`` held a value that is not a token count; their usage was not read (every
            reader: `promptcache.replay._usage_checks`, and for Claude Code logs
            `promptcache.replay._claude_code_checks`).
        bad_usage_first / bad_usage_reason: ``"FILE:LINE"`` and reason of the first such line.
    """

    count: int = 0
    first: str | None = None
    first_reason: str = ""
    per_file: dict[str, int] = field(default_factory=dict)
    types: dict[str, int] = field(default_factory=dict)
    bad_usage: int = 0
    bad_usage_first: str | None = None
    bad_usage_reason: str = ""

    def add(self, name: str, line: int, reason: str, kind: str = "json", before: str = "") -> None:
        """Record one skipped line ``line`` (1-based) of file ``name``: ``kind`` ``"json"`` (not valid JSON; its
        text ``before`` the break gives its record type) or ``"usage"`` (its usage not read).

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
        kind = record_type(before)
        self.types[kind] = self.types.get(kind, 0) + 1
        if self.first is None:
            self.first, self.first_reason = f"{name}:{line}", reason

    def warning(self) -> str | None:
        """The one-line summary of the lines that are not valid JSON (``None`` when there was none)."""
        if not self.count:
            return None
        files = len(self.per_file)
        where = f" in {files} files" if files > 1 else ""
        return (
            f"{self.first}: skipped {_lines(self.count)} {'that is' if self.count == 1 else 'that are'} not valid JSON{where} (first here: {self.first_reason}); "
            f"{self._types_part()}; use --strict to stop at the first one"
        )

    def _types_part(self) -> str:
        """What the broken lines were (``record_type``) and whether the bill can miss them: ``"by record type (read
        before the break): 62 assistant, 50 user, 3 system; the 62 assistant ones are API call records: ..."``."""
        ranked = sorted(self.types.items(), key=lambda item: (item[0] == "unknown", -item[1]))
        counts = ", ".join(f"{n:,} {kind}" for kind, n in ranked)
        calls, unknown = self.types.get(API_CALL_TYPE, 0), self.types.get("unknown", 0)
        if calls:
            ones = "one is an API call record" if calls == 1 else "ones are API call records"
            held = "the call it holds" if calls == 1 else "the calls they hold"
            effect = f"the {calls:,} {API_CALL_TYPE} {ones}: {held} may be missing from the replay and the bill"
        elif unknown:
            effect = (
                f"no {API_CALL_TYPE} record (an API call's); the {_lines(unknown)} of unknown type may hold "
                f"{'an API call' if unknown == 1 else 'API calls'}, missing from the replay and the bill"
            )
        else:
            effect = f"no {API_CALL_TYPE} record (an API call's): the bill misses none of them"
        return f"by record type (read before the break): {counts}; {effect}"

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
