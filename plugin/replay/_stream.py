"""Reading conversations one at a time, and releasing them in send-time order, so memory stays flat.

``iter_conversations(paths)`` yields the conversations of ``paths`` in order with the ids made unique exactly as
``promptcache.replay._readers.read_conversations`` does. A ``.jsonl``/``.ndjson`` file whose lines are whole
conversations is read line by line (one conversation in memory at a time), twice: the first pass finds the
timestamps far outside the rest of the file, which ``read_file`` sets aside for every other file
(``promptcache.replay._far_timestamps``); any other file is read whole by
``readers.read_file`` and its conversations yielded one by one, in order of their first request's recorded time when
every one has one (a Claude Code session folder lists its sub-agents after the main log).

``TimeOrder`` releases requests in send-time order (ties in reading order) while conversations arrive: a request
is released once no conversation still to come can start before it. That equals sorting every request up front
when conversations arrive in order of their first request (true of untimed files, which replay one conversation
after another, and of logs written in time order); a conversation that starts before requests already released
is replayed late and counted in ``late_conversations``.
"""

from __future__ import annotations

import hashlib
import heapq
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson

from . import _readers as readers
from ._far_timestamps import clear_far_timestamps, warn_far_timestamps
from ._formats import detect_record
from ._input_guard import open_lines
from ._inputs import MergedInput
from ._jsonpos import jsonl_records, loads_line
from ._messages import BadRecord
from ._prepare import Request
from ._transcript import Conversation, TranscriptError, TranscriptWarning

__all__ = ["NOT_A_LOG", "TimeOrder", "iter_conversations"]

#: How ``promptcache.replay._readers`` begins the error of a file that is not a log at all.
NOT_A_LOG = "not a JSON or JSONL transcript"


def iter_conversations(
    paths: Iterable[str | Path], merged: MergedInput | None = None, skip_non_logs: bool = False
) -> Iterator[Conversation]:
    """The conversations of ``paths``, one at a time, ids unique across the replay (``#2``, ``#3`` ... on repeats).

    Conversations of several files come in order of their first request's recorded time (one account's sessions
    share one cache timeline, so they are replayed interleaved as they were sent; a conversation without a recorded
    time keeps its place after the one before it in its file, so untimed files replay one after another, in the
    order given). With ``merged``, an API call whose request id an earlier conversation already replayed (a
    resumed session's log repeats its history) is left out of the later one, and counted in
    ``merged.merged_calls``; a conversation left with no call of its own is dropped. With ``skip_non_logs`` (several
    paths given, as ``dir/*`` gives them), a file that is not a log at all (``NOT_A_LOG``: its first line is not
    JSON and the whole is no JSON document; or ``readers.REPLAY_REPORT``: an earlier run's ``replay.json``) is left
    out with one ``TranscriptWarning`` naming it.

    Raises:
        TranscriptError: as ``readers.read_file`` (raised when the bad file or line is reached).
    """
    seen: dict[str, int] = {}
    calls: dict[str, tuple[bytes, str]] = {}
    skipped = merged.not_logs if merged is not None else []
    sources = [
        _keyed(i, _or_skip(path, skipped) if skip_non_logs else _file_conversations(path))
        for i, path in enumerate(paths)
    ]
    stream = sources[0] if len(sources) == 1 else heapq.merge(*sources, key=lambda item: item[0])
    for _, conv in stream:
        if merged is not None and not _own_calls(conv, calls, merged):
            continue
        count = seen.get(conv.id, 0) + 1
        seen[conv.id] = count
        if count > 1:
            conv.id = f"{conv.id}#{count}"
            while conv.id in seen:
                count += 1
                conv.id = f"{conv.id.rsplit('#', 1)[0]}#{count}"
            seen[conv.id] = 1
        yield conv


def _or_skip(path: str | Path, skipped: list[str]) -> Iterator[Conversation]:
    """``_file_conversations(path)``, or nothing, one warning and ``path`` added to ``skipped`` where the file is
    not a log at all."""
    conversations = _file_conversations(path)
    try:
        first = next(conversations)
    except StopIteration:
        return
    except TranscriptError as exc:
        if not exc.reason.startswith((NOT_A_LOG, readers.REPLAY_REPORT)):
            raise
        why = "" if exc.reason.startswith(readers.REPLAY_REPORT) else ", as it is not a log"  # (it says so)
        warnings.warn(f"{exc}; skipped it{why}", TranscriptWarning, stacklevel=2)
        skipped.append(str(path))
        return
    yield first
    yield from conversations


def _keyed(index: int, conversations: Iterator[Conversation]) -> Iterator[tuple[tuple[float, int, int], Conversation]]:
    """``((start, file index, position), conversation)``: the merge key of each conversation of one file."""
    start = float("-inf")
    for position, conv in enumerate(conversations):
        stamp = _start(conv)
        start = max(start, stamp) if stamp is not None else start
        yield (start, index, position), conv


def _reply_digest(conv: Conversation, at: int) -> bytes:
    """What a repeated request id is compared by: its reply's blocks and usage, and the message it answers (two
    messages, so cheap; the whole prompt would cost its length at every call)."""
    reply, asked = conv.messages[at], conv.messages[at - 1].blocks if at else ()
    return hashlib.blake2b(repr((asked, reply.blocks, reply.usage)).encode(), digest_size=16).digest()


def _own_calls(conv: Conversation, calls: dict[str, tuple[bytes, str]], merged: MergedInput) -> bool:
    """Drop from ``conv`` the replies of calls already replayed (by request id; ``calls`` maps each to its reply's
    digest and file, to tell the report whether a repeat was the same call). Returns whether any call of its own
    is left."""
    ids, replies = conv.meta.get("request_ids"), conv.replies
    if not isinstance(ids, list) or replies is None or len(ids) != len(replies):
        return True
    keys = [
        f"{call}\x00{conv.messages[at].model or ''}" if isinstance(call, str) and not call.startswith("line:") else ""
        for call, at in zip(ids, replies)
    ]  # one call: one request id and one model (an id with no model of its own, "line:...", is never merged)
    keep = [i for i, key in enumerate(keys) if not key or key not in calls]
    file = conv.source.rsplit(":", 1)[0]
    for i, key in enumerate(keys):
        if key and key in calls:  # a repeat: was it the same call, in the same file?
            merged.note_repeat(str(ids[i]), calls[key], (_reply_digest(conv, replies[i]), file))
        elif key:
            calls[key] = (_reply_digest(conv, replies[i]), file)
    if len(keep) == len(ids):
        return True
    if not keep:
        return False
    conv.replies = [replies[i] for i in keep]
    conv.meta = {**conv.meta, "request_ids": [ids[i] for i in keep]}
    sources = conv.meta.get("call_sources")
    if isinstance(sources, list) and len(sources) == len(ids):
        conv.meta["call_sources"] = [sources[i] for i in keep]
    return True


def _file_conversations(path: str | Path) -> Iterator[Conversation]:
    if Path(path).suffix.lower() in (".jsonl", ".ndjson") and _lines_are_conversations(path):
        yield from _stream_jsonl(path)
        return
    conversations = readers.read_file(path)
    starts = [_start(c) for c in conversations]
    known = [t for t in starts if t is not None]
    if len(known) == len(starts):  # a file read whole: hand its conversations over in time order
        order = sorted(range(len(conversations)), key=known.__getitem__)
        conversations = [conversations[i] for i in order]
    yield from conversations


def _start(conv: Conversation) -> float | None:
    """Send time of a conversation's first request (its recorded timestamp), ``None`` when not recorded."""
    ends = conv.request_ends()
    if not ends:
        return None
    stamp = conv.messages[ends[0] - 1].timestamp
    return stamp if stamp is not None else conv.messages[ends[0]].timestamp


def _lines_are_conversations(path: str | Path) -> bool:
    """Whether the first non-empty line of a JSONL file is a whole conversation (a list, or an object with a
    message list and no ``message`` event field)."""
    try:
        with open_lines(path) as handle:
            for raw in handle:
                if raw.strip():
                    rec = loads_line(raw)  # as jsonl_records reads it (``NaN`` as text)
                    if detect_record(rec) is not None:  # a call log (e.g. a proxy's, whose records hold messages)
                        return False
                    return readers._is_conversation(rec) and not (isinstance(rec, dict) and "message" in rec)
    except (OSError, orjson.JSONDecodeError):
        return False  # read_file reports it
    return False


def _stream_jsonl(path: str | Path) -> Iterator[Conversation]:
    """The conversations of a JSONL file of one conversation per line, one at a time, without timestamps far
    outside the rest of the file: a first pass collects the file's times (``promptcache.replay._far_timestamps``),
    the second yields the conversations with those times cleared."""
    name = str(path)
    times = [m.timestamp for conv in _jsonl_lines(path) for m in conv.messages if m.timestamp is not None]
    far = warn_far_timestamps(name, times)
    for conv in _jsonl_lines(path):
        if far:
            clear_far_timestamps(conv, far)
        yield conv


def _jsonl_lines(path: str | Path) -> Iterator[Conversation]:
    name = str(path)
    index = 0
    with open_lines(path) as handle:
        for lineno, rec in jsonl_records(name, handle):
            if not readers._is_conversation(rec) or (isinstance(rec, dict) and "message" in rec):
                raise TranscriptError(
                    name, lineno, "expected a whole conversation on every line (as the first line is)"
                )
            try:
                yield readers._conversation(name, rec, (), index, line=lineno)
            except BadRecord as bad:
                raise TranscriptError(name, lineno, bad.reason) from None
            index += 1
    if index == 0:
        raise TranscriptError(name, 1, "no conversations in the file")


class TimeOrder:
    """Requests in send-time order while conversations stream in (see the module docstring)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Request]] = []
        self._seq = 0
        self.released_until = float("-inf")
        self.late_conversations = 0

    def add(self, requests: list[Request]) -> Iterator[Request]:
        """Queue one conversation's requests (times assigned); yields the requests now safe to replay."""
        if requests:
            start = min(r.time_s for r in requests)
            if start < self.released_until:
                self.late_conversations += 1
            yield from self._release(start)
            for req in requests:
                heapq.heappush(self._heap, (req.time_s, self._seq, req))
                self._seq += 1

    def _release(self, until: float) -> Iterator[Request]:
        heap = self._heap
        while heap and heap[0][0] <= until:
            time_s, _, req = heapq.heappop(heap)
            self.released_until = max(self.released_until, time_s)
            yield req

    def drain(self) -> Iterator[Request]:
        """Yields every queued request (at the end of the input)."""
        yield from self._release(float("inf"))
