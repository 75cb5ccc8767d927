"""``ResponseCache``: the processor that replays whole model replies when the resolved prompt repeats."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine
from typing import ClassVar, Final, cast

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage
from langchain_core.runnables.config import var_child_runnable_config

from promptcache._config import (
    UNSET,
    _Unset,
    check_call_options,
    is_unicode,
    scope_from_configurable,
    validate_key_part,
    validate_scope,
)
from promptcache._deprecation import deprecated_attribute, renamed_argument
from promptcache._log import ThrottledWarning, get_logger
from promptcache._metrics import PluginMetrics, PluginStats
from promptcache._option_checks import check_bool
from promptcache._processor import Processor, as_model_response
from promptcache._savings import count_reply_hit
from promptcache.backends._base import ServerCache, validate_ttl
from promptcache.response_cache._entry import decode_hit, encode_entry, is_storable, with_metadata
from promptcache.response_cache._key_options import check_bust, check_key, run_coroutine
from promptcache.response_cache._keys import (
    DEFAULT_AGENT_ID,
    ResponseCacheKeyInputs,
    build_response_cache_key,
    custom_key,
    inputs_from_request,
    request_key,
    step_number,
)
from promptcache.response_cache._offered_tools import is_custom_key, tools_called_but_not_offered

__all__ = ["DEFAULT_RESPONSE_CACHE_TTL_SECONDS", "RESPONSE_CACHE_CONTEXT_KEY", "ResponseCache"]

DEFAULT_RESPONSE_CACHE_TTL_SECONDS: Final = 300
"""Default entry lifetime in seconds (5 minutes), as Mastra's ResponseCache (after OpenRouter's reference)."""

RESPONSE_CACHE_CONTEXT_KEY: Final = "promptcache.response_cache"
"""``configurable`` key under which ``ResponseCache.context()`` / ``apply_context()`` store per-call options."""

KeyFunction = Callable[[ResponseCacheKeyInputs], object]
"""A ``key`` function: the key (``str``), or an awaitable of it; anything else falls back to the default key."""

_log = get_logger("promptcache.response_cache")
_HOOKS = ("process_request", "process_response", "aprocess_request", "aprocess_response")
_OWN_HOOKS: dict[type, bool] = {}  # class -> does it keep ResponseCache's own hooks (then the fast path applies)
_STATE = "_promptcache_response_cache"  # attribute on the request copy carrying (key, bust) to the response hook


class ResponseCache(Processor):
    """Caches whole model replies at the request/response boundary of each model call (Mastra's ResponseCache).

    The request hook builds a key from the resolved prompt (after outer processors), model, settings, tools, tool
    choice, response format, step number and scope, and answers from the cache on a hit (the model is not called).
    The response hook stores the complete reply for ``ttl_s`` seconds. Each step of a tool loop is its own entry.

    Args:
        cache: the ``ServerCache`` holding entries (``InMemoryServerCache``, ``RedisCache`` or a subclass).
        ttl_s: entry lifetime in seconds (number > 0; default 300, ``DEFAULT_RESPONSE_CACHE_TTL_SECONDS``).
        ttl: deprecated name of ``ttl_s`` (a ``DeprecationWarning``; giving both is a ``TypeError``).
        scope: tenant for every call; ``None`` shares entries across users; omitted: resolved per call
            (``configurable["user_id"]``, then ``configurable["langgraph_auth_user_id"]``; an authenticated
            ``langgraph_auth_user_id`` wins, see `promptcache._config.resolve_scope`).
        allow_scope_override: let a per-call ``scope`` or ``configurable["user_id"]`` differ from the
            authenticated ``configurable["langgraph_auth_user_id"]`` (default False: such a call raises
            ``PermissionError``); only for deployments whose configs come from trusted code.
        key: a fixed key (``str``, still namespaced by agent id and scope) or a function, sync or async, of
            `ResponseCacheKeyInputs` returning the key; a function that raises or returns a non-string
            falls back to `build_response_cache_key` (logged).
        bust: skip the read on every call, still write (default False).
        agent_id: key namespace (default ``"promptcache-response-cache"``): a non-empty ``str`` without ``":"`` (the key
            separator) or NUL, checked like a scope (`promptcache._config.validate_key_part`).

    Per call (``ResponseCache.context(...)`` / ``apply_context(config, ...)``): ``key``, ``scope``, ``bust``.
    ``cache``, ``ttl_s`` and ``agent_id`` belong to the instance.

    Hits carry ``response_metadata["promptcache"] = {"cache": "hit", "key", "age_s", "usage"}`` (``usage``: the
    original ``usage_metadata``), a fresh message id and zero billed ``usage_metadata``; misses carry
    ``{"cache": "miss" | "bust", "key"}``. A backend that fails or holds a corrupt entry gives a miss, logged at
    most once a minute; it never raises into the call.

    Raises:
        TypeError / ValueError: bad ``cache``, ``ttl_s``, ``scope``, ``key``, ``bust``, ``agent_id`` or
            ``allow_scope_override`` (message names the value), at construction.
        PermissionError (per call): a per-call ``scope`` or ``configurable["user_id"]`` naming another user than
            the authenticated one (see ``allow_scope_override``), before the cache is read.
    """

    _wrap_runs_hooks: ClassVar[bool] = True  # its wrap methods are the hooks' steps, inlined (fast path)

    context_key: ClassVar[str] = RESPONSE_CACHE_CONTEXT_KEY
    context_options: ClassVar[frozenset[str]] = frozenset({"key", "scope", "bust"})

    def __init__(
        self,
        cache: ServerCache,
        *,
        ttl_s: float = DEFAULT_RESPONSE_CACHE_TTL_SECONDS,
        scope: object = UNSET,
        key: str | KeyFunction | None = None,
        bust: bool = False,
        agent_id: str = DEFAULT_AGENT_ID,
        ttl: object = UNSET,
        allow_scope_override: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(cache, ServerCache):
            raise TypeError(f"cache must be a promptcache ServerCache, got {type(cache).__name__}: {cache!r}")
        name, seconds = renamed_argument(
            "ResponseCache", "ttl", ttl, "ttl_s", ttl_s, DEFAULT_RESPONSE_CACHE_TTL_SECONDS
        )
        if seconds is None:
            raise TypeError(f"{name} must be a number of seconds > 0, got None")
        self.ttl_s: float = validate_ttl(seconds, what=name)
        checked_scope = scope if isinstance(scope, _Unset) else validate_scope(scope, what="scope")
        if key is not None:
            check_key(key, "key")
        validate_key_part(agent_id, "agent_id")
        self.cache = cache
        self._scope = checked_scope
        self.key = key
        self.bust = check_bust(bust, "bust")
        self.agent_id = agent_id
        self.allow_scope_override = check_bool(allow_scope_override, "allow_scope_override")
        self._warning = ThrottledWarning(_log)
        self.metrics = PluginMetrics("response_cache", agent_id)

    def stats(self, reset: bool = False) -> PluginStats:
        """Counts since construction (or the last ``reset=True``): ``hits`` (calls answered from the cache),
        ``misses`` (calls sent to the model, busts included), ``writes`` (replies handed to the backend),
        ``errors`` (a backend that raised, a corrupt entry, a reply that could not be serialised, a key function
        that failed); on each hit, the recorded reply's ``input_tokens``/``output_tokens`` as tokens saved and, for a model in
        `promptcache._pricing`, what that call cost as ``dollars_saved``. Failures a ``RedisCache``
        absorbs itself are in its own ``stats()``. Also sent to OpenTelemetry (`promptcache._metrics`)."""
        return self.metrics.snapshot(reset)

    @property
    def ttl(self) -> float:
        """Deprecated name of `ttl_s` (seconds); reading it warns (``DeprecationWarning``)."""
        deprecated_attribute("ResponseCache.ttl", "ResponseCache.ttl_s")
        return self.ttl_s

    @property
    def name(self) -> str:
        """Middleware name (unique per agent id, so two caches with different ids can share an agent)."""
        return f"ResponseCache[{self.agent_id}]"

    @classmethod
    def _check_option_values(cls, opts: dict[str, object]) -> None:
        if opts.get("key") is not None:
            check_key(opts["key"], "per-call key")
        if "scope" in opts:
            validate_scope(opts["scope"], what="per-call scope")
        if "bust" in opts:
            check_bust(opts["bust"], "per-call bust")

    # -- keys ----------------------------------------------------------------------------------------------
    def _call_options_and_scope(self) -> tuple[dict[str, object], str | None]:
        """Per-call options and scope of the running call, reading its config once.

        ``call_options()`` + ``resolve_scope()`` would run ``ensure_config()`` three times (~7 us each inside an
        agent: it copies the callback manager); only ``configurable`` matters here, read straight from the
        context variable LangChain keeps the running config in. The scope rule stays the shared one
        (`promptcache._config.scope_from_configurable`), applied to that ``configurable``.
        """
        config = var_child_runnable_config.get()
        configurable = (config.get("configurable") if config else None) or {}
        raw = configurable.get(self.context_key)
        options = {} if raw is None else check_call_options(self.context_key, self.context_options, raw)
        scope = scope_from_configurable(
            configurable, options, self._scope, self.scope_fields, self.allow_scope_override
        )
        return options, scope

    def _plan(self) -> tuple[object, str | None, bool]:
        """The running call's key choice (per-call ``key``, else the constructor's), scope and ``bust``."""
        options, scope = self._call_options_and_scope()
        if options:  # names checked above; values may have been written by hand (as context() checks them)
            self._check_option_values(options)
        chosen = options.get("key") if options.get("key") is not None else self.key
        return chosen, scope, options.get("bust", self.bust) is True  # a bool: checked above and at construction

    def _finish_key(self, inputs: ResponseCacheKeyInputs, result: object, error: Exception | None = None) -> str:
        """The key from a key function's ``result``; the default key (logged) when it raised ``error`` or returned
        anything but a non-empty UTF-8 string."""
        if error is not None:
            self._warning.warn("promptcache: ResponseCache key function failed; using the default key", exc=error)
        elif isinstance(result, str) and result and is_unicode(result):
            return custom_key(inputs.agent_id, inputs.scope, result)
        else:
            self._warning.warn(
                "promptcache: ResponseCache key function returned %r (not a non-empty UTF-8 string); "
                "using the default key",
                result,
            )
        self.metrics.error()
        return build_response_cache_key(inputs)

    def _prepare(self, request: ModelRequest) -> tuple[str, bool] | tuple[ResponseCacheKeyInputs, KeyFunction, bool]:
        """``(key, bust)`` when the key is known now, else ``(inputs, key function, bust)``."""
        chosen, scope, bust = self._plan()
        if chosen is None:  # the default key, built straight from the request
            return request_key(request, self.agent_id, scope), bust
        if isinstance(chosen, str):  # fixed: one entry per step of the turn (see custom_key)
            return custom_key(self.agent_id, scope, chosen, step_number(request.messages)), bust
        # a callable: check_key accepted nothing else
        return inputs_from_request(request, self.agent_id, scope), cast("KeyFunction", chosen), bust

    def _key(self, request: ModelRequest) -> tuple[str, bool]:
        plan = self._prepare(request)
        if len(plan) == 2:
            return plan
        inputs, chosen, bust = plan
        try:
            result = chosen(inputs)
            if inspect.isawaitable(result):
                result = run_coroutine(cast("Coroutine[object, object, object]", result))
        except Exception as exc:  # noqa: BLE001 - a broken key function must not break the call
            return self._finish_key(inputs, None, exc), bust
        return self._finish_key(inputs, result), bust

    async def _akey(self, request: ModelRequest) -> tuple[str, bool]:
        plan = self._prepare(request)
        if len(plan) == 2:
            return plan
        inputs, chosen, bust = plan
        try:
            result = chosen(inputs)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:  # noqa: BLE001
            return self._finish_key(inputs, None, exc), bust
        return self._finish_key(inputs, result), bust

    # -- reading and writing entries -----------------------------------------------------------------------
    def _hit(self, raw: bytes | None, key: str, request: ModelRequest) -> ModelResponse | None:
        if raw is None:
            return self.metrics.lookup(None)
        try:
            hit = decode_hit(raw, key, request.response_format)
        except Exception as exc:  # noqa: BLE001 - corrupt entry: a miss
            self.metrics.error()
            self._warning.warn("promptcache: ResponseCache entry %s unreadable; treating as a miss", key, exc=exc)
            return self.metrics.lookup(None)
        # A default key covers the tool schemas, so its hit offers the same tools; a custom key does not.
        unknown = tools_called_but_not_offered(hit, request) if is_custom_key(key, self.agent_id) else []
        if unknown:  # e.g. a fixed key whose entry outlived a change of the agent's tools: never replay it
            _log.debug("ResponseCache entry %s calls tools the request does not offer (%s): a miss", key, unknown)
            return self.metrics.lookup(None)
        return count_reply_hit(self.metrics, hit, request.model)

    def _read(self, key: str, bust: bool, request: ModelRequest) -> ModelResponse | None:
        if bust:
            return self.metrics.lookup(None)
        try:
            raw = self.cache.get(key)
        except Exception as exc:  # noqa: BLE001 - a backend that raises is a miss
            self.metrics.error()
            self._warning.warn("promptcache: ResponseCache read failed; treating as a miss", exc=exc)
            raw = None
        return self._hit(raw, key, request)

    async def _aread(self, key: str, bust: bool, request: ModelRequest) -> ModelResponse | None:
        if bust:
            return self.metrics.lookup(None)
        try:
            raw = await self.cache.aget(key)
        except Exception as exc:  # noqa: BLE001
            self.metrics.error()
            self._warning.warn("promptcache: ResponseCache read failed; treating as a miss", exc=exc)
            raw = None
        return self._hit(raw, key, request)

    def _encode(self, response: ModelResponse) -> bytes | None:
        if not is_storable(response):
            return None
        try:
            return encode_entry(response)
        except Exception as exc:  # noqa: BLE001 - an unserialisable reply is returned, just not stored
            self.metrics.error()
            self._warning.warn("promptcache: ResponseCache could not serialise the reply; not stored", exc=exc)
            return None

    @staticmethod
    def _mark(response: ModelResponse, key: str, bust: bool) -> ModelResponse:
        result = list(response.result)
        for i, message in enumerate(result):
            if isinstance(message, AIMessage):
                meta = {**message.response_metadata, "promptcache": {"cache": "bust" if bust else "miss", "key": key}}
                result[i] = with_metadata(message, meta)
                break
        return ModelResponse(result=result, structured_response=response.structured_response)

    def _write(self, key: str, bust: bool, response: ModelResponse) -> ModelResponse:
        value = self._encode(response)
        if value is None:
            return response
        try:
            self.cache.set(key, value, self.ttl_s)
            self.metrics.write()
        except Exception as exc:  # noqa: BLE001 - a backend that raises: the write is skipped
            self.metrics.error()
            self._warning.warn("promptcache: ResponseCache write failed; reply not cached", exc=exc)
        return self._mark(response, key, bust)

    async def _awrite(self, key: str, bust: bool, response: ModelResponse) -> ModelResponse:
        value = self._encode(response)
        if value is None:
            return response
        try:
            await self.cache.aset(key, value, self.ttl_s)
            self.metrics.write()
        except Exception as exc:  # noqa: BLE001
            self.metrics.error()
            self._warning.warn("promptcache: ResponseCache write failed; reply not cached", exc=exc)
        return self._mark(response, key, bust)

    @staticmethod
    def _forward(request: ModelRequest, key: str, bust: bool) -> ModelRequest:
        sent = request.override()
        object.__setattr__(sent, _STATE, (key, bust))
        return sent

    def _state(self, request: ModelRequest) -> tuple[str, bool]:
        state = getattr(request, _STATE, None)
        return state if state is not None else self._key(request)

    # -- hooks (the Processor contract; used by with_processors) -------------------------------------------
    def process_request(self, request: ModelRequest) -> ModelRequest | ModelResponse:
        """Look the request up; on a hit return the cached reply (short-circuit), else pass a copy on."""
        key, bust = self._key(request)
        hit = self._read(key, bust, request)
        return hit if hit is not None else self._forward(request, key, bust)

    async def aprocess_request(self, request: ModelRequest) -> ModelRequest | ModelResponse:
        """Async `process_request` (uses the backend's ``aget``)."""
        key, bust = await self._akey(request)
        hit = await self._aread(key, bust, request)
        return hit if hit is not None else self._forward(request, key, bust)

    def process_response(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        """Store a complete reply under the request's key for ``ttl`` seconds; mark it as a miss."""
        key, bust = self._state(request)
        return self._write(key, bust, response)

    async def aprocess_response(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        """Async `process_response` (uses the backend's ``aset``)."""
        key, bust = self._state(request)
        return await self._awrite(key, bust, response)

    # -- AgentMiddleware (create_agent) --------------------------------------------------------------------
    def _own_hooks(self) -> bool:
        cls = type(self)
        own = _OWN_HOOKS.get(cls)
        if own is None:
            own = _OWN_HOOKS[cls] = all(getattr(cls, name) is getattr(ResponseCache, name) for name in _HOOKS)
        return own

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> ModelResponse:
        """The hooks' steps around ``handler``, with the key kept in a local: no request copy to carry it.

        A subclass that overrides a hook gets the plain `Processor` behaviour (its hooks are called).
        """
        if not self._own_hooks():
            return super().wrap_model_call(request, handler)
        key, bust = self._key(request)
        hit = self._read(key, bust, request)
        if hit is not None:
            return hit
        return self._write(key, bust, as_model_response(handler(request)))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        """Async twin of `wrap_model_call`."""
        if not self._own_hooks():
            return await super().awrap_model_call(request, handler)
        key, bust = await self._akey(request)
        hit = await self._aread(key, bust, request)
        if hit is not None:
            return hit
        return await self._awrite(key, bust, as_model_response(await handler(request)))
