"""The checks every input file of ``promptcache replay`` passes before and while it is read.

A replay reads files a user names, which may be anything: a named pipe (``open`` waits for a writer forever), a
device (``/dev/zero`` never ends), a small ``.gz`` that expands to gigabytes, or one line of hundreds of megabytes.
Every reader opens its files through this module, which refuses them with a ``TranscriptError`` (the command's
exit 2 and one line naming the file) before they cost more than the limits below:

- only regular files are opened (a symlink to one is fine); a directory is left to the caller (session folders);
- a file is at most `InputLimits.max_file_bytes` on disk and, decompressed, in memory;
- a gzip file may expand at most `InputLimits.max_gzip_ratio` times its size (at least
  `InputLimits.gzip_floor_bytes`), checked while it is decompressed, so a bomb stops at the limit;
- a line (bytes up to a ``\\n``) is at most `InputLimits.max_line_bytes`, checked while reading.

`LIMITS` holds the limits in force (tests replace it with small ones).
"""

from __future__ import annotations

import io
import itertools
import os
import stat
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ._transcript import TranscriptError

__all__ = [
    "LIMITS",
    "InputLimits",
    "check_input_file",
    "is_special_file",
    "name_summary",
    "open_lines",
    "read_input",
    "skipped_not_regular",
]

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class InputLimits:
    """Limits on one input file (bytes).

    Attributes:
        max_file_bytes: largest file, on disk and decompressed (default 1 GiB): a file read whole is held in
            memory with its parsed form, and a bigger one is better split or streamed as JSONL.
        max_line_bytes: longest line (default 64 MiB): 16 million tokens at ~4 bytes a token, 16 times the largest
            context window in the model table (1M tokens), so no line one request could hold is refused.
        max_gzip_ratio: most a gzip file may expand (default 50 times: five times the most compressible
            transcript measured, 9.9 times; bench/README.md "Replay: hostile input").
        gzip_floor_bytes: a gzip file may always expand to this much, whatever its ratio (default 64 MiB).
        chunk_bytes: read size (default 1 MiB).
    """

    max_file_bytes: int = 1 << 30
    max_line_bytes: int = 64 << 20
    max_gzip_ratio: int = 50
    gzip_floor_bytes: int = 64 << 20
    chunk_bytes: int = 1 << 20


LIMITS = InputLimits()
"""The limits in force."""

_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def is_special_file(path: Path) -> bool:
    """Whether ``path`` is there but is a named pipe, a device or a socket (a broken link or a directory is not)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return any(test(mode) for test, _ in _KINDS)


def name_summary(names: list[str]) -> str:
    """The first name, and how many more (the summary stays one line)."""
    return names[0] + (f" and {len(names) - 1:,} more" if len(names) > 1 else "")


def skipped_not_regular(folder: Path, names: list[str], like: str = "a session log") -> str:
    """The warning for entries of ``folder`` named like ``like`` that were skipped for not being regular files."""
    one = len(names) == 1
    return (
        f"{folder}: skipped {len(names):,} {'entry' if one else 'entries'} named like {like} that "
        f"{'is not a regular file' if one else 'are not regular files'} (a pipe, a device, a broken link: "
        f"{name_summary(names)})"
    )


def check_input_file(path: str | Path) -> os.stat_result:
    """``os.stat`` of ``path`` when it is a directory or a regular file within the size limit.

    Raises:
        TranscriptError: no such file, unreadable, not a regular file (a named pipe, a device, a socket), or larger
            than ``LIMITS.max_file_bytes``; the message names the file.
    """
    name = str(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise TranscriptError(name, 0, "no such file") from None
    except OSError as exc:
        raise TranscriptError(name, 0, f"cannot read file: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        return st
    if not stat.S_ISREG(st.st_mode):
        kind = next((what for test, what in _KINDS if test(st.st_mode)), "not a regular file")
        raise TranscriptError(name, 0, f"is {kind}, not a regular file; give a transcript file")
    if st.st_size > LIMITS.max_file_bytes:
        raise TranscriptError(
            name,
            0,
            f"is {st.st_size:,} bytes, over the limit of {LIMITS.max_file_bytes:,}; split it into smaller files",
        )
    return st


class _LineLimit:
    """Tracks the length of the current line across chunks; raises once one is over ``LIMITS.max_line_bytes``."""

    def __init__(self, name: str) -> None:
        self.name, self.run, self.line = name, 0, 1

    def feed(self, chunk: bytes) -> None:
        limit = LIMITS.max_line_bytes
        first = chunk.find(b"\n")
        if first < 0:
            self.run += len(chunk)
        else:
            self.run += first
            self._check(limit)
            self.line += chunk.count(b"\n")
            self.run = len(chunk) - chunk.rfind(b"\n") - 1
        self._check(limit)

    def _check(self, limit: int) -> None:
        if self.run > limit:
            raise TranscriptError(
                self.name, self.line, f"a line longer than {limit:,} bytes (the limit); not a transcript line"
            )


def _chunks(handle: BinaryIO) -> Iterator[bytes]:
    size = min(LIMITS.chunk_bytes, LIMITS.max_line_bytes)  # a line inside one chunk is then within the limit
    while chunk := handle.read(size):
        yield chunk


def _gunzip(name: str, chunks: Iterator[bytes], allowance: int) -> Iterator[bytes]:
    """The decompressed bytes of a gzip stream (every member), at most ``allowance`` of them."""
    out = 0
    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    started = False  # the current member has had input
    for chunk in chunks:
        data = chunk
        while data:
            started = True
            try:
                piece = decoder.decompress(data, max(1, min(LIMITS.chunk_bytes, allowance + 1 - out)))
            except zlib.error as exc:
                raise TranscriptError(name, 0, f"cannot decompress gzip file: {exc}") from None
            out += len(piece)
            if out > allowance:
                raise TranscriptError(
                    name, 0, f"expands to more than {allowance:,} bytes when decompressed (the limit); not replayed"
                )
            yield piece
            data = decoder.unconsumed_tail
            if decoder.eof:  # the next member, if any
                data = decoder.unused_data + data
                decoder, started = zlib.decompressobj(16 + zlib.MAX_WBITS), False
    if started and not decoder.eof:
        raise TranscriptError(name, 0, "cannot decompress gzip file: compressed file ended before the end of the data")


def read_input(path: str | Path) -> tuple[bytes, bool]:
    """The whole contents of one input file, decompressed when it is gzip, within `LIMITS`.

    Returns:
        ``(data, was_gzip)``.

    Raises:
        TranscriptError: as `check_input_file`, a directory, or a limit crossed while reading (the message
            names the file, and the line for a long line).
    """
    name = str(path)
    st = check_input_file(path)
    if stat.S_ISDIR(st.st_mode):
        raise TranscriptError(name, 0, "is a directory, not a file")
    lines = _LineLimit(name)
    parts = io.BytesIO()  # grown in place and handed over whole: the file is held once, not as chunks and a copy
    try:
        with open(path, "rb") as handle:
            chunks = _chunks(handle)
            first = next(chunks, b"")
            gzipped = first.startswith(_GZIP_MAGIC)
            rest: Iterator[bytes] = itertools.chain((first,), chunks)
            if gzipped:
                allowance = min(LIMITS.max_file_bytes, max(LIMITS.gzip_floor_bytes, LIMITS.max_gzip_ratio * st.st_size))
                rest = _gunzip(name, rest, allowance)
            for piece in rest:
                lines.feed(piece)
                parts.write(piece)
    except OSError as exc:
        raise TranscriptError(name, 0, f"cannot read file: {exc.strerror or exc}") from None
    return parts.getvalue(), gzipped


@contextmanager
def open_lines(path: str | Path) -> Iterator[Iterator[bytes]]:
    """Open a (plain) JSONL file for reading line by line: the lines (with their ``\\n``), each within
    ``LIMITS.max_line_bytes``, read without ever holding a longer one.

    Raises:
        TranscriptError: as `check_input_file`, or a line over the limit (named with its number).
    """
    name = str(path)
    check_input_file(path)
    limit = LIMITS.max_line_bytes
    with open(path, "rb") as handle:

        def lines() -> Iterator[bytes]:
            lineno = 0
            while line := handle.readline(limit + 1):
                lineno += 1
                if len(line) > limit and not line.endswith(b"\n"):
                    raise TranscriptError(
                        name, lineno, f"a line longer than {limit:,} bytes (the limit); not a transcript line"
                    )
                yield line

        yield lines()
