"""Log formats recognised by their content (never by file name), and the one-line answer when none matches.

Each format names the fields its records carry (``signature``) and decides from one record whether it is one of its
own (``matches``). A JSONL file is taken by the format its first record matches; a JSON document by the format its
first record matches, the records being the document itself, its elements (a JSON array), or the elements of its
``data`` / ``runs`` / ``observations`` list (as the LangSmith and Langfuse APIs wrap them). A format's ``parse``
turns one record into calls (``promptcache.replay._bedrock_bodies.ParsedCall``) and ``promptcache.replay._calls``
groups them.

A file no reader takes gets ``no_format_hint``: the formats tried and, for the nearest one (the most of its
signature present), its first missing field.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import orjson

from promptcache._types import JSONMapping

from ._bedrock_bodies import ParsedCall
from ._calls import conversations
from ._format import Format
from ._jsonpos import JSONPath, first_record, iter_lines, jsonl_records, line_of
from ._messages import BadRecord
from ._transcript import Conversation, TranscriptError
from ._usage_checks import huge_usage, report_usage, watching_counts

__all__ = ["FORMATS", "detect_document", "detect_jsonl", "no_format_hint", "read_with"]

_WRAPPERS = ("data", "runs", "observations")
_SAMPLE = 20  # records looked at for the "nearest format" hint


def _registry() -> list[Format]:
    from . import (
        _read_anthropic_batches,
        _read_langfuse,
        _read_langsmith,
        _read_openai,
        _read_otel,
        _read_recording,
        _read_stream_json,
    )

    return [
        _read_recording.FORMAT_SPEC,
        _read_langsmith.FORMAT_SPEC,
        _read_langfuse.FORMAT_SPEC,
        _read_otel.FORMAT_SPEC,
        _read_openai.FORMAT_SPEC,
        _read_anthropic_batches.FORMAT_SPEC,
        _read_stream_json.FORMAT_SPEC,
    ]


_FORMATS: list[Format] = []


def FORMATS() -> list[Format]:  # noqa: N802  # a constant, built on first use (loading every reader)
    """The recognised formats, in detection order."""
    if not _FORMATS:
        _FORMATS.extend(_registry())
    return _FORMATS


def _first(records: Iterable[object]) -> object:
    return next(iter(records), None)


def _document_records(doc: object) -> tuple[list[object], JSONPath]:
    """The records of a JSON document and the path of their list (``()`` for the document itself)."""
    if isinstance(doc, list):
        return doc, ()
    if isinstance(doc, dict):
        for key in _WRAPPERS:
            if isinstance(doc.get(key), list) and doc[key] and isinstance(doc[key][0], dict):
                return doc[key], (key,)
        return [doc], ()
    return [], ()


def detect_document(doc: object) -> Format | None:
    """The format of a JSON document (module docstring), ``None`` when none matches."""
    records, _ = _document_records(doc)
    first = _first(records)
    return next((f for f in FORMATS() if first is not None and f.matches(first)), None)


def detect_jsonl(data: bytes) -> Format | None:
    """The format of a JSONL file's first non-blank line, read as its reader reads it (``NaN`` and ``Infinity`` as
    text, ``promptcache.replay._jsonpos.loads_line``); ``None`` when none matches."""
    found, rec = first_record(data)
    return detect_record(rec) if found else None


def detect_record(rec: object) -> Format | None:
    """The format one record belongs to (``None``: none)."""
    return next((f for f in FORMATS() if f.matches(rec)), None)


def no_format_hint(records: Iterable[object]) -> str:
    """``"not a log format either (tried ...); nearest: X, which needs 'field'"`` for the first records."""
    sample = [r for _, r in zip(range(_SAMPLE), records) if isinstance(r, dict)]
    best: tuple[int, Format | None, str] = (0, None, "")
    for fmt in FORMATS():
        for rec in sample:
            present = [f for f in fmt.signature if _has(rec, f)]
            missing = next((f for f in fmt.signature if not _has(rec, f)), "")
            if len(present) > best[0] and missing:
                best = (len(present), fmt, missing)
    tried = ", ".join(f.name for f in FORMATS())
    if best[1] is None:
        return f"not one of the log formats either (tried {tried}; none has a field of its records)"
    return f"not one of the log formats either (tried {tried}); nearest: {best[1].name}, which needs {best[2]!r}"


def _has(rec: JSONMapping, dotted: str) -> bool:
    node: object = rec
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


class _At(BadRecord):
    """A malformed record with its line (0: inside a JSON document, found by ``where``)."""

    def __init__(self, line: int, where: JSONPath, reason: str) -> None:
        super().__init__(where, reason)
        self.line = line


def _items(name: str, data: bytes, doc: object) -> Iterator[tuple[int, JSONPath, object]]:
    if doc is None:
        for lineno, rec in jsonl_records(name, iter_lines(data)):
            yield lineno, (), rec
        return
    records, base = _document_records(doc)
    single = not isinstance(doc, list) and not base
    for i, rec in enumerate(records):
        yield 0, (() if single else (*base, i)), rec


def read_with(fmt: Format, name: str, data: bytes, doc: object = None) -> list[Conversation]:
    """Read a file of format ``fmt``: JSONL ``data``, or the parsed JSON document ``doc``.

    Raises:
        TranscriptError: ``FILE:LINE: reason`` for a malformed record (the line of the JSONL record, or of the
            value inside a JSON document), or a file without any call.
    """
    if fmt.read_file is not None:
        if doc is not None:  # records of a JSON array, one per line (their line numbers are record numbers)
            data = b"\n".join(orjson.dumps(r) for r in _document_records(doc)[0])
        return fmt.read_file(name, data)
    calls: list[ParsedCall] = []
    families: dict[str, str] = {}
    try:
        for line, where, rec in _items(name, data, doc):
            if not fmt.matches(rec):
                raise _At(line, where, f"expected a record of {fmt.name} (as the first one is), got another kind")
            problem = fmt.usage_problem(rec) if fmt.usage_problem is not None else None
            try:
                with watching_counts() as seen:
                    parsed = fmt.parse(rec, line)
                problem = problem or (seen[0] if seen else None)
                if problem is not None:  # the record is read, its usage is not (or, --strict, the error)
                    report_usage(name, line or line_of(data.decode("utf-8", errors="replace"), where), problem)
                for call, family in parsed:
                    if problem is not None:
                        call.reply.usage = None
                    elif (huge := huge_usage(call.reply.usage)) is not None:
                        raise BadRecord((), huge)
                    calls.append(call)
                    if family:
                        families[call.request_id] = family
            except BadRecord as bad:
                raise _At(line, (*where, *bad.where), bad.reason) from None
    except _At as at:
        line = at.line or line_of(data.decode("utf-8", errors="replace"), at.where)
        raise TranscriptError(name, line, f"{fmt.name}: {at.reason}") from None
    if fmt.finish is not None:
        return fmt.finish(name, calls)
    return conversations(name, calls, fmt.key, families)
