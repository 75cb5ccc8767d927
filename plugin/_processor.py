"""The processor contract: request- and response-stage hooks around every model call.

A `Processor` is a LangChain ``AgentMiddleware``: put it in ``create_agent(model, tools, middleware=[...])``.
It adds a two-stage shape on top of ``wrap_model_call``:

- ``process_request(request)`` runs before the model. It returns the request to send on (a *new* object,
  ``request.override(...)``; never a mutation of messages that belong to the graph state), or a
  ``ModelResponse`` / ``AIMessage`` to short-circuit: the model and the inner processors are then not called, and
  this processor's own response hook is skipped; outer processors' response hooks still run (the onion).
- ``process_response(request, response)`` runs after the model with the request this processor sent on.

Request hooks run in list order, response hooks in reverse order. ``aprocess_request`` / ``aprocess_response``
default to the sync hooks. `with_processors` (in `promptcache._wrapped_model`) runs the same chain around
a plain chat model.

Per-call options: a processor with a ``context_key`` gets ``Cls.context(**opts)`` (a new ``RunnableConfig``) and
``Cls.apply_context(config, **opts)`` (merged in place, same object returned); inside a hook,
``self.call_options()`` reads them back from the running call's config.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Literal

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from promptcache._config import (
    UNSET,
    _Unset,
    apply_call_options,
    existing_call_options,
    merge_call_options,
    read_call_options,
    resolve_scope,
)

__all__ = [
    "HookName",
    "ModelRequest",
    "ModelResponse",
    "Processor",
    "as_model_response",
    "check_sync",
    "request_stage",
]


#: The processor hooks `request_stage` names in its errors.
HookName = Literal["process_request", "aprocess_request", "process_response", "aprocess_response"]
#: The sync hooks; each has an async twin named ``"a" + name``.
_SYNC_HOOKS: tuple[HookName, HookName] = ("process_request", "process_response")


def as_model_response(result: object) -> ModelResponse:
    """Normalise a hook or handler result to a ``ModelResponse``.

    Accepts a ``ModelResponse``, an ``AIMessage`` or LangChain's ``ExtendedModelResponse`` (its ``model_response``).

    Raises:
        TypeError: anything else (the message names the type).
    """
    if isinstance(result, ModelResponse):
        return result
    if isinstance(result, AIMessage):
        return ModelResponse(result=[result], structured_response=None)
    inner = getattr(result, "model_response", None)
    if isinstance(inner, ModelResponse):
        return inner
    raise TypeError(f"expected ModelResponse or AIMessage, got {type(result).__name__}: {result!r}")


def _is_short_circuit(result: object) -> bool:
    return isinstance(result, (ModelResponse, AIMessage))


def request_stage(
    processor: object, result: object, hook: HookName = "process_request"
) -> ModelRequest | ModelResponse:
    """Check what a request hook returned: a ``ModelRequest`` to send on, or a short-circuit reply, returned as a
    ``ModelResponse`` holding at least one ``AIMessage`` (the agent's next message).

    Raises:
        TypeError: anything else (``None``, a dict, a list...), naming the processor, the hook and the type.
        ValueError: a short-circuit ``ModelResponse`` without an ``AIMessage`` (an empty reply, or a
            ``HumanMessage`` the agent would add to the conversation as if the user had said it).
    """
    if isinstance(result, ModelRequest):
        return result
    if not _is_short_circuit(result):
        raise TypeError(
            f"{type(processor).__name__}.{hook} returned {type(result).__name__} ({result!r:.80}); "
            "expected the ModelRequest to send on (request.override(...)) or a ModelResponse/AIMessage "
            "to short-circuit"
        )
    response = as_model_response(result)
    if not any(isinstance(m, AIMessage) for m in response.result):
        raise ValueError(
            f"{type(processor).__name__}.{hook} short-circuited without an AIMessage: {response.result!r:.120}"
        )
    return response


def check_sync(processor: Processor) -> None:
    """Refuse a sync call through a processor that defines only async hooks (they would be skipped silently).

    Raises:
        TypeError: the processor's class overrides ``aprocess_request``/``aprocess_response`` but not the sync twin.
    """
    missing = type(processor)._async_only
    if missing:
        raise TypeError(
            f"{type(processor).__name__} defines only {', '.join('a' + m for m in missing)}; a sync call "
            f"(invoke, stream, batch) cannot run it: define {', '.join(missing)} too, or call it with "
            "ainvoke/astream/abatch"
        )


_WRAP_HOOKS = ("wrap_model_call", "awrap_model_call", "wrap_tool_call", "awrap_tool_call")


def _pin_hook_signatures(cls: type) -> None:
    """Give the ``wrap_*`` hooks ``cls`` defines a ``__signature__`` (PEP 362): the one ``inspect`` would compute.

    ``create_agent`` wraps every middleware hook in LangSmith's ``traceable``, whose wrapper calls
    ``inspect.signature`` on the hook twice per model call, tracing on or off (langsmith ``run_helpers``); building
    a signature from a function takes ~20 us, reading a pinned one ~6 us. Nothing else changes: the pinned value
    is the computed one.
    """
    for name in _WRAP_HOOKS:
        func = cls.__dict__.get(name)
        if inspect.isfunction(func) and "__signature__" not in func.__dict__:
            func.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]  # not in FunctionType's stub


class Processor(AgentMiddleware):
    """Base class of promptcache processors (a LangChain ``AgentMiddleware`` with request/response hooks).

    Subclasses override any of `process_request`, `process_response` and their async twins.
    Class attributes:

    - ``context_key``: the ``configurable`` key holding this processor's per-call options (``None``: no options).
    - ``context_options``: the option names accepted by `context` / `apply_context`.
    - ``scope_fields``: ``configurable`` fields used as scope fallbacks (see `promptcache._config`).
    - ``allow_scope_override``: let a per-call scope or ``scope_fields`` value differ from the authenticated
      ``configurable["langgraph_auth_user_id"]`` (default False: refused, `promptcache._config.resolve_scope`).
    """

    context_key: ClassVar[str | None] = None
    context_options: ClassVar[frozenset[str]] = frozenset()
    scope_fields: tuple[str, ...] = ("user_id", "langgraph_auth_user_id")
    allow_scope_override: bool = False
    _scope: str | None | _Unset = UNSET
    #: ``wrap_model_call``/``awrap_model_call`` only run the four hooks, so ``with_processors(...).stream`` may run
    #: the hooks itself and stream the model's chunks. A subclass that defines its own wrap methods gets ``False``
    #: (stream then runs its wrap method and yields the reply as one chunk) unless it sets this in its own body.
    _wrap_runs_hooks: ClassVar[bool] = True
    #: sync hook names whose async twin alone is overridden (sync calls refuse them: `check_sync`).
    _async_only: ClassVar[tuple[HookName, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _pin_hook_signatures(cls)
        own = cls.__dict__
        if ("wrap_model_call" in own or "awrap_model_call" in own) and "_wrap_runs_hooks" not in own:
            cls._wrap_runs_hooks = False
        cls._async_only = tuple(
            name
            for name in _SYNC_HOOKS
            if getattr(cls, name) is getattr(Processor, name)
            and getattr(cls, "a" + name) is not getattr(Processor, "a" + name)
        )

    # -- hooks ---------------------------------------------------------------------------------------------
    def process_request(self, request: ModelRequest) -> ModelRequest | ModelResponse | AIMessage:
        """Request stage: return the request to send on, or a response to short-circuit. Default: unchanged."""
        return request

    def process_response(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        """Response stage: ``request`` is the one this processor sent on. Default: unchanged."""
        return response

    async def aprocess_request(self, request: ModelRequest) -> ModelRequest | ModelResponse | AIMessage:
        """Async request stage; defaults to `process_request`."""
        return self.process_request(request)

    async def aprocess_response(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        """Async response stage; defaults to `process_response`."""
        return self.process_response(request, response)

    # -- AgentMiddleware -----------------------------------------------------------------------------------
    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> ModelResponse:
        """Run the hooks around ``handler`` (the inner processors and the model); see the module docstring.

        Raises:
            TypeError / ValueError: a hook returned something else than documented (`request_stage`), or the
                class defines only async hooks (`check_sync`).
        """
        if self._async_only:
            check_sync(self)
        sent = request_stage(self, self.process_request(request))
        if isinstance(sent, ModelResponse):
            return sent
        response = as_model_response(handler(sent))
        return as_model_response(self.process_response(sent, response))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        """Async twin of `wrap_model_call`."""
        sent = request_stage(self, await self.aprocess_request(request), "aprocess_request")
        if isinstance(sent, ModelResponse):
            return sent
        response = as_model_response(await handler(sent))
        return as_model_response(await self.aprocess_response(sent, response))

    # -- per-call options ----------------------------------------------------------------------------------
    @classmethod
    def _require_context_key(cls) -> str:
        if not cls.context_key:
            raise TypeError(f"{cls.__name__} takes no per-call options")
        return cls.context_key

    @classmethod
    def context(cls, config: RunnableConfig | None = None, /, **opts: object) -> RunnableConfig:
        """Per-call options for this processor class in a config for one call.

        ``Cls.context(config, bust=True)``: a merged copy of your ``config`` (its ``thread_id``, ``user_id``,
        callbacks, tags... kept; options already set for this class kept unless overridden); ``config`` itself is
        never modified, so the options do not stick to later calls. ``Cls.context(bust=True)``: a new config
        holding only the options.

        Raises:
            ValueError: an option name this class does not accept (named in the message), given or already in
                ``config``.
            TypeError: ``config`` (or its ``configurable``) is not a mapping; options already in ``config`` that
                are not a dict; a bad option value, given or already in ``config`` (see the class).
        """
        key = cls._require_context_key()
        cls._check_option_values({**existing_call_options(config, key, cls.context_options), **opts})
        return merge_call_options(config, key, cls.context_options, **opts)

    @classmethod
    def apply_context(cls, config: RunnableConfig | None, **opts: object) -> RunnableConfig:
        """Merge per-call options into ``config`` in place and return the same object: every later call made
        with that config carries them too (for one call, use `context` ``(config, ...)``, a merged copy).

        A later call overwrites options set by an earlier one; other ``configurable`` keys are kept.

        Raises:
            ValueError: an option name this class does not accept, given or already in ``config``.
            TypeError: ``config`` is not a dict; a bad option value, given or already in ``config``. Nothing is
                modified when it raises.
        """
        key = cls._require_context_key()
        if config is None or isinstance(config, dict):  # else apply_call_options names the bad config
            cls._check_option_values({**existing_call_options(config, key, cls.context_options), **opts})
        return apply_call_options(config, key, cls.context_options, **opts)

    @classmethod
    def _check_option_values(cls, opts: dict[str, object]) -> None:
        """Subclasses validate option values here (raise ``TypeError``/``ValueError``)."""

    def call_options(self, config: RunnableConfig | None = None) -> dict[str, object]:
        """This processor's per-call options from ``config`` (default: the running call's config), checked like
        `context` checks them (names and values), so options written into a config by hand are never
        silently ignored.

        Raises:
            TypeError / ValueError: options that are not a dict, an unknown name, or a bad value.
        """
        if not self.context_key:
            return {}
        opts = read_call_options(self.context_key, config, self.context_options)
        if opts:
            self._check_option_values(opts)
        return opts

    def resolve_scope(self, config: RunnableConfig | None = None) -> str | None:
        """The scope of the running call: per-call ``scope``, else the constructor's, else config fields."""
        return resolve_scope(
            self.call_options(config), self._scope, config, self.scope_fields, self.allow_scope_override
        )


_pin_hook_signatures(Processor)
