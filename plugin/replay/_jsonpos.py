"""Line numbers for values inside a JSON document, so a reader can say *where* a bad message is.

Files are parsed with orjson (fast); only when a record turns out to be malformed is the text parsed a second time
with the standard library's pure-Python scanner, patched to remember where each object and array starts.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeAlias

import orjson

from ._skipped import current_tally
from ._transcript import TranscriptError

__all__ = ["JSONPath", "first_record", "iter_lines", "jsonl_records", "line_of", "line_at", "loads_line"]

#: Where a value sits in a parsed JSON document: the keys and list indices from the root.
JSONPath = tuple[str | int, ...]

# orjson parses at most 1,024 levels; the pure-Python scanner takes a few frames per level
_RECURSION_NEEDED = 8_000


def line_at(text: str | bytes, pos: int) -> int:
    """1-based line of offset ``pos`` in ``text``, counting ``\r\n``, ``\r`` and ``\n`` as line breaks (as
    ``bytes.splitlines`` does for JSONL files, so a file's lines are numbered the same whatever its format)."""
    head = text[:pos]
    if isinstance(head, bytes):
        return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1
    return head.count("\n") + head.count("\r") - head.count("\r\n") + 1


#: One line with its break (``\r\n``, ``\r`` or ``\n``, the breaks ``bytes.splitlines`` knows), or a last line
#: without one.
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def iter_lines(data: bytes) -> Iterator[bytes]:
    """The lines of ``data`` as ``data.splitlines()`` gives them, one at a time: reading the first lines of a file
    costs those lines, never a list of every line of the file (a list of a large file's lines takes many times
    its size in memory)."""
    for match in _LINE.finditer(data):
        yield match.group().rstrip(b"\r\n")


class _PosDict(dict[str, object]):
    __slots__ = ("pos",)
    pos: int


class _PosList(list[object]):
    __slots__ = ("pos",)
    pos: int


#: The scanner's ``scan_once(text, index) -> (value, end)`` (``json.scanner``).
_Scan: TypeAlias = Callable[[str, int], tuple[object, int]]


def _positioned_decoder() -> json.JSONDecoder:
    decoder = json.JSONDecoder()
    hooks: Any = decoder  # the pure-Python scanner's private hooks are not in the typeshed stubs
    internals: Any = json.decoder
    base_object, base_array = internals.JSONObject, internals.JSONArray

    def parse_object(
        s_and_end: tuple[str, int],
        strict: bool,
        scan_once: _Scan,
        object_hook: Callable[[dict[str, object]], object] | None,
        object_pairs_hook: Callable[[list[tuple[str, object]]], object] | None,
        memo: dict[str, str] | None = None,
    ) -> tuple[_PosDict, int]:
        start = s_and_end[1] - 1
        value, end = base_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo)
        out = _PosDict(value)
        out.pos = start
        return out, end

    def parse_array(s_and_end: tuple[str, int], scan_once: _Scan) -> tuple[_PosList, int]:
        start = s_and_end[1] - 1
        value, end = base_array(s_and_end, scan_once)
        out = _PosList(value)
        out.pos = start
        return out, end

    hooks.parse_object = parse_object
    hooks.parse_array = parse_array
    scanner: Any = json.scanner
    hooks.scan_once = scanner.py_make_scanner(decoder)
    return decoder


def line_of(text: str, path: JSONPath) -> int:
    """1-based line where the value at ``path`` (keys / indices from the document root) starts in ``text``.

    Follows ``path`` as far as it exists and returns the line of the deepest object or array reached; returns 1
    when the document cannot be parsed at all (the caller reports parse errors with the parser's own line).
    """
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION_NEEDED))
    try:
        node: Any = _positioned_decoder().decode(text)
    except (ValueError, RecursionError):
        return 1
    finally:
        sys.setrecursionlimit(limit)
    best = getattr(node, "pos", 0)
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            break
        best = getattr(node, "pos", best)
    return line_at(text, best)


_NON_FINITE = re.compile(rb"(?<![\w\"])-?(?:NaN|Infinity)(?![\w\"])")


def loads_line(raw: bytes) -> Any:
    """One JSONL line parsed; a line that is JSON but for ``NaN`` / ``Infinity`` numbers (which Python's ``json``
    writes) is read with each of them as its text (``"NaN"``), which no field accepts as a number, so the reader's
    own checks name the bad value and its line instead of the whole line being skipped as broken.

    Raises:
        orjson.JSONDecodeError: the line is not JSON, even with those numbers.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        if not _NON_FINITE.search(raw):
            raise
        try:
            return json.loads(raw, parse_constant=str)
        except (ValueError, RecursionError):
            pass
        raise


def first_record(data: bytes) -> tuple[bool, object]:
    """``(True, value)`` for the first non-blank line of the JSONL ``data``, parsed as `jsonl_records` parses every
    line (``loads_line``), so a format is detected from the record its reader will read; ``(False, None)`` when
    that line is not JSON or there is none. Only the lines up to it are looked at."""
    for raw in iter_lines(data):
        if raw.strip():
            try:
                return True, loads_line(raw)
            except orjson.JSONDecodeError:
                return False, None
    return False, None


def jsonl_records(
    name: str, lines: Iterable[bytes], on_skip: Callable[[int, bytes], None] | None = None
) -> Iterator[tuple[int, object]]:
    """``(line number, parsed value)`` for each non-blank line of a JSONL file (1-based numbers, blank lines counted).

    Inside ``promptcache.replay._skipped.skipping`` a line that is not valid JSON is skipped and counted (except
    the file's first non-blank line; a file where broken lines outnumber good ones is an error at its end, naming
    its first broken line); ``on_skip(line, raw)``
    is then called with it, so a reader can recover what the broken text still says.

    Raises:
        TranscriptError: ``name:LINE: invalid JSON on this line: ...`` for a line orjson cannot parse that is not
            skipped.
    """
    tally = current_tally()
    good = bad = 0
    first_bad: TranscriptError | None = None
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            value = loads_line(raw)
        except orjson.JSONDecodeError as exc:
            error = TranscriptError(name, lineno, f"invalid JSON on this line: {exc.msg}")
            if tally is None or not good:
                raise error from None
            bad += 1
            first_bad = first_bad or error
            tally.add(name, lineno, exc.msg, before=exc.doc[: exc.pos])
            if on_skip is not None:
                on_skip(lineno, raw)
            continue
        good += 1
        if tally is not None:
            tally.seen(value)
        yield lineno, value
    if first_bad is not None and bad > good:  # mostly not JSON: not a log with a few broken lines
        raise first_bad
