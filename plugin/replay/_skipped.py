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
and the rest are not. Claude Code writes one record per content block of a reply, all with the reply's message id
and ``requestId``, so a broken assistant record loses its call only where no record that was read carries either
id (``call_ids``: the ``"id":"msg_..."`` and ``"requestId"`` strings its text reads before the break);
``calls_missing`` counts those calls (a broken record without a readable id counts as one).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["API_CALL_TYPE", "SkippedLines", "call_ids", "current_tally", "record_type", "skipping"]

#: The record type of an API call's reply (Claude Code, Claude Code stream-json).
API_CALL_TYPE = "assistant"
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]')
_MESSAGE_ID = re.compile(r'"id"\s*:\s*"(msg_[^"\\]*)"')
_REQUEST_ID = re.compile(r'"requestId"\s*:\s*"([^"\\]+)"')


def call_ids(before: str) -> tuple[str, ...]:
    """The message id (``"msg_..."``) and ``requestId`` the text ``before`` a line's break reads, in that order
    (either left out where the text does not hold it)."""
    found = (_MESSAGE_ID.search(before), _REQUEST_ID.search(before))
    return tuple(m.group(1) for m in found if m is not None)


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
        broken_calls: per broken assistant record, the ids its text reads (``call_ids``).
        seen_ids: the message ids and ``requestId`` of the records that were read (``seen``).
    """

    count: int = 0
    first: str | None = None
    first_reason: str = ""
    per_file: dict[str, int] = field(default_factory=dict)
    types: dict[str, int] = field(default_factory=dict)
    bad_usage: int = 0
    bad_usage_first: str | None = None
    bad_usage_reason: str = ""
    broken_calls: list[tuple[str, ...]] = field(default_factory=list)
    seen_ids: set[str] = field(default_factory=set)

    def seen(self, record: object) -> None:
        """Note the message id and ``requestId`` of a record that was read (a JSON object; others are ignored)."""
        if not isinstance(record, dict):
            return
        request, message = record.get("requestId"), record.get("message")
        if isinstance(request, str):
            self.seen_ids.add(request)
        if isinstance(message, dict) and isinstance(ident := message.get("id"), str):
            self.seen_ids.add(ident)

    @property
    def calls_missing(self) -> int:
        """API calls of the broken assistant records that no record read carries (module docstring)."""
        missing: set[str] = set()
        unnamed = 0
        for ids in self.broken_calls:
            if not ids:
                unnamed += 1
            elif not any(i in self.seen_ids for i in ids):
                missing.add(ids[0])
        return len(missing) + unnamed

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
        if kind == API_CALL_TYPE:
            self.broken_calls.append(call_ids(before))
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
        before the break): 62 assistant, 50 user, 3 system; 62 broken assistant records, of which 15 are calls with
        no other record (their usage is missing from the replay)"``."""
        ranked = sorted(self.types.items(), key=lambda item: (item[0] == "unknown", -item[1]))
        counts = ", ".join(f"{n:,} {kind}" for kind, n in ranked)
        calls, unknown = self.types.get(API_CALL_TYPE, 0), self.types.get("unknown", 0)
        if calls:
            lost = self.calls_missing
            records = f"{calls:,} broken {API_CALL_TYPE} record{'' if calls == 1 else 's'}"
            if not lost:
                effect = f"{records}, each a call with another record that was read: the bill misses none of them"
            elif lost == calls == 1:
                effect = f"{records}, a call with no other record (its usage is missing from the replay)"
            else:
                calls_word = "is a call" if lost == 1 else "are calls"
                their = "its" if lost == 1 else "their"
                effect = (
                    f"{records}, of which {lost:,} {calls_word} with no other record ({their} usage is missing from "
                    "the replay)"
                )
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
