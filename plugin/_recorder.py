"""``TrafficRecorder``: one JSON line per model call, for ``promptcache replay`` to read back exactly.

Put it **last** in the middleware list (innermost: ``create_agent(model, tools, middleware=[ResponseCache(...),
BedrockCachePoints(), TrafficRecorder("calls.jsonl")])``, or last in ``with_processors(model, [...])``): it then
sees the request every other processor has already changed, and only the calls that reach the model (a
``ResponseCache`` hit never does, so it is not recorded). For a Bedrock Converse model it also records the body
boto3 sends, with the ``cachePoint`` blocks ``CachePointChatBedrockConverse`` / ``BedrockCachePoints`` placed on
the final request (a botocore ``provide-client-params`` handler on the model's client, active only while a
recorded call runs). The line layout is in ``promptcache._recording``.

Writing never fails the user's call: a line that cannot be serialised or written is lost, and the failure is logged
at most once a minute (``promptcache._log.ThrottledWarning``).
"""

from __future__ import annotations

import contextvars
import logging
import os
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
from langchain_core.messages import AIMessage, BaseMessage, messages_to_dict
from langchain_core.runnables.config import ensure_config

from promptcache._config import validate_scope
from promptcache._keys import canonical_json
from promptcache._log import ThrottledWarning
from promptcache._option_checks import check_bool
from promptcache._processor import ModelRequest, ModelResponse, Processor
from promptcache._recording import FORMAT_TAG, VERSION, redact

__all__ = ["TrafficRecorder", "DEFAULT_MAX_BYTES"]

logger = logging.getLogger("promptcache.recorder")

#: Default size (bytes) at which a recording file is rotated: 100 MiB.
DEFAULT_MAX_BYTES = 100 * 1024 * 1024
_OPERATIONS = ("Converse", "ConverseStream")
_HANDLER_ID = "promptcache.TrafficRecorder"


@dataclass(slots=True)
class _Call:
    started: float
    sent: list[tuple[str, dict[str, object]]] = field(default_factory=list)


_ACTIVE: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("promptcache_recorded_call", default=None)


_MAX_BACKUPS = 1_000  # TrafficRecorder's ``backups`` bound (its docstring)


def _capture(params: dict[str, object], model: object, **_: object) -> None:
    """botocore ``provide-client-params`` handler: keep the request of the recorded call running here."""
    call = _ACTIVE.get()
    if call is not None:  # only the latest attempt is kept (a retried call: the one that answered)
        call.sent[:] = [(str(getattr(model, "name", "")), params)]


def _hook(model: object) -> None:
    """Register ``_capture`` once on a Bedrock model's boto3 client (``unique_id``: registering again is a no-op)."""
    client = getattr(model, "client", None)
    events = getattr(getattr(client, "meta", None), "events", None)
    if events is None or not hasattr(events, "register"):
        return
    for op in _OPERATIONS:
        events.register(f"provide-client-params.bedrock-runtime.{op}", _capture, unique_id=f"{_HANDLER_ID}.{op}")


def _json_default(value: object) -> object:
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if hasattr(value, "model_dump"):
        return value.model_dump()
    return repr(value)


def _tool_schema(tool: Any) -> dict[str, Any]:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    if isinstance(tool, dict):
        return tool
    try:
        return convert_to_openai_tool(tool)
    except Exception:  # a tool LangChain cannot describe is recorded by name
        return {"name": str(getattr(tool, "name", tool))}


def _model_id(model: object) -> str:
    for attr in ("base_model_id", "model_id", "model_name", "model"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def _checked_path(target: str | os.PathLike[str]) -> Path:
    """``target`` as a ``Path`` a line can be appended to: not empty (``Path("")`` is the current folder), not a
    directory, and in a folder that exists (the file itself is created by the first write)."""
    if not os.fspath(target):
        raise ValueError("target must be a file path, got an empty path ''")
    path = Path(target)
    if path.is_dir():
        raise ValueError(f"target {str(path)!r} is a directory, not a file")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"target {str(path)!r}: folder {str(path.parent)!r} does not exist")
    try:
        if path.exists():
            if path.is_file():  # opening to append changes nothing; /proc/version and read-only files refuse it
                path.open("a", encoding="utf-8").close()
        else:  # a file the first call creates: the folder must really take one (nothing is left behind)
            fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".check", dir=path.parent)
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise PermissionError(f"target {str(path)!r} cannot be written: {exc.strerror or exc}") from exc
    return path


class _Sink:
    """Appends lines to a path (rotated at ``max_bytes``: ``file.1`` ... ``file.<backups>``) or a text stream."""

    def __init__(self, target: str | os.PathLike[str] | IO[str], max_bytes: int | None, backups: int) -> None:
        self._lock = threading.Lock()
        self._stream: IO[str] | None = None
        self._path: Path | None = None
        if isinstance(target, (str, os.PathLike)):
            self._path = _checked_path(target)
        elif hasattr(target, "write"):
            self._stream = target
        else:
            raise TypeError(f"target must be a file path or a writable text stream, got {type(target).__name__}")
        self._max_bytes, self._backups = max_bytes, backups

    def write(self, line: str) -> None:
        with self._lock:
            if self._stream is not None:
                self._stream.write(line)
                self._stream.flush()
                return
            assert self._path is not None
            size = len(line.encode())
            if self._max_bytes and self._path.exists() and self._path.stat().st_size + size > self._max_bytes:
                self._rotate()
            with self._path.open("a", encoding="utf-8") as handle:
                handle.write(line)

    def _rotate(self) -> None:
        assert self._path is not None
        if self._backups <= 0:
            self._path.unlink(missing_ok=True)
            return
        oldest = self._path.with_name(f"{self._path.name}.{self._backups}")
        oldest.unlink(missing_ok=True)
        for n in range(self._backups - 1, 0, -1):
            src = self._path.with_name(f"{self._path.name}.{n}")
            if src.exists():
                src.rename(self._path.with_name(f"{self._path.name}.{n + 1}"))
        self._path.rename(self._path.with_name(f"{self._path.name}.1"))


class TrafficRecorder(Processor):
    """Records every model call as one JSON line (layout: ``promptcache._recording``) for ``promptcache replay``.

    Place it last (innermost) in ``create_agent(..., middleware=[...])`` or ``with_processors(model, [...])`` so
    it records the request after every other processor ran (module docstring).

    Args:
        target: a file path (appended to; created by the first call when missing; its folder must exist) or any writable text stream (``sys.stdout``, an
            open file, ``io.StringIO``); a stream is never rotated or closed.
        drop_text: ``True`` records sizes and SHA-256 digests instead of message texts (tool schemas, usage and
            settings are kept); the recording still replays.
        max_bytes: a file is rotated before a line would take it past this many bytes (default 100 MiB;
            ``None`` or 0: never).
        backups: rotated files kept (``calls.jsonl.1`` newest ... ``calls.jsonl.<backups>``; default 5; 0 keeps
            none; at most 1,000: each rotation renames every kept file while the call that rotates waits).
        scope: the user scope recorded with each call (default: resolved per call from ``configurable``
            ``user_id`` / ``langgraph_auth_user_id``, as the other processors do).

    Attributes:
        lines_written: lines written so far. lines_lost: lines lost to a failed write (each logged, at most once a
            minute, by ``promptcache._log.ThrottledWarning``).

    Raises:
        TypeError: ``target`` is neither a path nor a writable stream; ``scope`` is not a string.
        ValueError: ``max_bytes`` or ``backups`` negative, ``backups`` over 1,000; ``target`` an empty path (it would name the current
            folder) or a directory; ``scope`` an empty string.
        FileNotFoundError: ``target``'s folder does not exist (the file itself is created by the first call).
        PermissionError: ``target`` cannot be appended to (a read-only file, ``/proc/version``), or its folder
            does not take a new file (tried with a temporary file, removed at once).
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | IO[str],
        *,
        drop_text: bool = False,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        backups: int = 5,
        scope: str | None = None,
    ) -> None:
        super().__init__()
        if max_bytes is not None and (isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0):
            raise ValueError(f"max_bytes must be a byte count >= 0 or None, got {max_bytes!r}")
        if isinstance(backups, bool) or not isinstance(backups, int) or backups < 0:
            raise ValueError(f"backups must be a count >= 0, got {backups!r}")
        if backups > _MAX_BACKUPS:
            raise ValueError(f"backups must be a count from 0 to {_MAX_BACKUPS}, got {backups!r}")
        self.drop_text = check_bool(drop_text, "drop_text")
        if scope is not None:
            self._scope = validate_scope(scope)  # checked here, not on each call (where it would lose every line)
        self._sink = _Sink(target, max_bytes, backups)
        self._warning = ThrottledWarning(logger)
        self.lines_written = 0
        self.lines_lost = 0

    # -- hooks ------------------------------------------------------------------------------------------------
    def process_request(self, request: ModelRequest) -> ModelRequest:
        """Start recording the call (the request goes on unchanged)."""
        try:
            _hook(request.model)
        except Exception as exc:  # never fail the call
            self._warning.warn("promptcache: TrafficRecorder cannot watch the model's client", exc=exc)
        _ACTIVE.set(_Call(time.time()))
        return request

    def process_response(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        """Write the call's line (a failure loses the line, logged once a minute); the response is unchanged."""
        call = _ACTIVE.get()
        _ACTIVE.set(None)
        try:
            line = self._line(request, response, call)
            try:
                data = orjson.dumps(line, default=_json_default)
            except TypeError:  # a lone surrogate, which UTF-8 cannot encode: marked as canonical JSON marks it
                data = canonical_json(line)
            self._sink.write(data.decode() + "\n")
            self.lines_written += 1
        except Exception as exc:
            self.lines_lost += 1
            self._warning.warn("promptcache: TrafficRecorder lost a line", exc=exc)
        return response

    # -- the line ---------------------------------------------------------------------------------------------
    def _line(self, request: ModelRequest, response: ModelResponse, call: _Call | None) -> dict[str, Any]:
        configurable = ensure_config().get("configurable") or {}
        messages: list[BaseMessage] = list(request.messages)
        if request.system_message is not None:
            messages.insert(0, request.system_message)
        reply = next((m for m in response.result if isinstance(m, AIMessage)), None)
        settings = {k: v for k, v in (request.model_settings or {}).items()}
        for attr in ("temperature", "max_tokens", "top_p", "stop_sequences"):
            value = getattr(request.model, attr, None)
            if value is not None:
                settings.setdefault(attr, value)
        body: dict[str, Any] = {
            "promptcache": FORMAT_TAG,
            "version": VERSION,
            "id": str(uuid.uuid4()),
            "started": call.started if call else None,
            "ended": time.time(),
            "thread_id": configurable.get("thread_id"),
            "user": self.resolve_scope(),
            "model": _model_id(request.model),
            "model_class": type(request.model).__name__,
            "request": {
                "messages": _compact(messages_to_dict(messages)),
                "tools": [_tool_schema(t) for t in request.tools or []],
                "settings": settings,
                "tool_choice": request.tool_choice,
            },
            "response": {
                "message": _compact(messages_to_dict([reply]))[0] if reply is not None else None,
                "usage_metadata": dict(reply.usage_metadata) if reply is not None and reply.usage_metadata else None,
            },
            "text": "dropped" if self.drop_text else "kept",
        }
        if call is not None and call.sent:
            operation, params = call.sent[-1]
            body["sent"] = {"api": "bedrock-converse", "operation": operation, "body": params}
        if self.drop_text:
            body["request"]["messages"] = redact(body["request"]["messages"])
            if body["response"]["message"] is not None:
                body["response"]["message"] = redact(body["response"]["message"])
            if "sent" in body:
                body["sent"]["body"] = redact(body["sent"]["body"])
        return body


_KEEP_DATA = ("content", "tool_calls", "tool_call_id", "name", "status", "id")


def _compact(dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages_to_dict`` output without the empty and bookkeeping fields (``response_metadata`` and the like)."""
    out = []
    for item in dicts:
        data = item.get("data") or {}
        kept = {k: data[k] for k in _KEEP_DATA if data.get(k) not in (None, [], {}, "")}
        kept.setdefault("content", data.get("content", ""))
        if item.get("type") == "ai" and data.get("usage_metadata"):
            kept["usage_metadata"] = data["usage_metadata"]
        out.append({"type": item.get("type"), "data": kept})
    return out
