"""LangGraph adapters: ``MemoryNode`` and ``MemoryState`` (typed memory in a ``StateGraph``).

Put the node before the model node. ``MemoryState`` is ``MessagesState`` plus the memory keys, so use it as the
state, or mix it into yours (``class State(MessagesState, MemoryState)``, ``class State(AgentState,
MemoryState)``)::

    builder = StateGraph(MemoryState)
    builder.add_node("memory", MemoryNode(TypedMemoryStore.for_store(store)))
    builder.add_node("model", call_model)            # uses state["memory_prompt"] as (part of) the system prompt
    builder.add_edge(START, "memory"); builder.add_edge("memory", "model")
    graph = builder.compile(checkpointer=MemorySaver())

The node follows `promptcache.memory._policy`: feedback, user facts and references once per thread (kept in
state, so the checkpointer carries them), project state every turn unless the question is conceptual.

Misuse is loud: a graph whose state lacks the memory keys (e.g. ``StateGraph(MessagesState)``: LangGraph would drop
the node's writes) raises `MemoryStateError` naming the missing key, and so does a state without the
messages key (e.g. a state built without ``MessagesState``); no scope found (no ``user_id`` in ``configurable``,
no ``scope=``) logs one warning per node, then uses the unscoped memories.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config
from langgraph.store.base import BaseStore

from promptcache._compat import PREGEL_READ_KEY
from promptcache._config import DEFAULT_SCOPE_FIELDS, UNSET, resolve_scope
from promptcache._errors import PromptCacheError
from promptcache._metrics import PluginMetrics, PluginStats
from promptcache._option_checks import check_bool, check_name, check_scope_fields
from promptcache._savings import count_memory_turn
from promptcache.memory._classifier import make_classifier
from promptcache.memory._middleware import with_memory_prompt
from promptcache.memory._namespaces import UnscopedWarning, check_fixed_scope, memory_call_options
from promptcache.memory._policy import MEMORY_STATE_KEYS, MemoryLoader, MemoryState
from promptcache.memory._store import TypedMemoryStore

__all__ = ["MemoryNode", "MemoryState", "MemoryStateError", "with_memory_prompt"]

_READ_KEY = PREGEL_READ_KEY
"""``configurable`` entry LangGraph gives a running node to read channels (`promptcache._compat`); absent when the
node is called outside a graph run, and then the channel check is skipped."""


class MemoryStateError(PromptCacheError, KeyError):
    """The graph state cannot carry what ``MemoryNode`` reads or writes; the message names the missing key."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _missing_channels(config: RunnableConfig) -> list[str]:
    """The `MEMORY_STATE_KEYS` that are not channels of the running graph (``[]`` outside a graph run, or
    when the running LangGraph does not expose its channel reader the way this check expects)."""
    read = (config.get("configurable") or {}).get(_READ_KEY)
    if not callable(read):
        return []
    missing = []
    for key in MEMORY_STATE_KEYS:
        try:
            read(key, False)
        except KeyError:
            missing.append(key)
        except Exception:  # noqa: BLE001 - another LangGraph version: no check rather than a false alarm
            return []
    return missing


class MemoryNode(Runnable[Mapping[str, object], dict[str, object]]):
    """A LangGraph node that loads typed memories into state (`MemoryState` keys); sync and async.

    Args:
        memory: a `TypedMemoryStore`, a ``BaseStore`` (wrapped with default settings), or ``None`` to use
            the graph's store (``builder.compile(store=...)``) at run time.
        classifier: conceptual-question classifier (``Callable[[str], bool]``, a chat model, or ``None``: the
            default rules of `promptcache.memory.is_conceptual_question`).
        scope: fixed scope; default: the shared rule -- per-call ``configurable["promptcache.memory"]["scope"]``,
            then ``configurable["user_id"]``, then ``configurable["langgraph_auth_user_id"]``. ``None``: unscoped.
        load_references: load references as pointers, ``[short id] description`` (default True); give the model
            `promptcache.memory.make_reference_tool` so it can fetch what a pointer points to.
        messages_key: the state key of the conversation (default ``"messages"``).
        scope_fields: the ``configurable`` fields tried for the scope.
        allow_scope_override: let a per-call ``scope`` or ``configurable["user_id"]`` differ from the
            authenticated ``configurable["langgraph_auth_user_id"]`` (default False: such a turn raises
            ``PermissionError`` before any read); only for deployments whose configs come from trusted code.
        prompt_caching: True when the model the graph calls caches the prompt (e.g. a
            ``CachePointChatBedrockConverse``; its ``caches_prompts`` attribute): project state is then kept or
            skipped per conversation (`promptcache.memory._cache_cost`). Put ``memory_prompt`` in its own
            system block after the system prompt (`with_memory_prompt`).

    Raises:
        TypeError: ``memory`` of another type; ``classifier`` neither a callable nor a chat model;
            ``load_references`` or ``allow_scope_override`` not a bool; ``scope_fields`` a single ``str``;
            ``messages_key`` not a non-empty ``str``.
        TypeError / ValueError: a bad fixed ``scope`` (empty, or containing ``"."``), at construction.
        ValueError (at run time): a bad resolved scope (e.g. an e-mail ``user_id``), before anything is read.
    """

    name = "memory"

    def __init__(
        self,
        memory: TypedMemoryStore | BaseStore | None = None,
        *,
        classifier: Callable[..., bool] | BaseChatModel | None = None,
        scope: object = UNSET,
        load_references: bool = True,
        messages_key: str = "messages",
        scope_fields: tuple[str, ...] = DEFAULT_SCOPE_FIELDS,
        allow_scope_override: bool = False,
        prompt_caching: bool = False,
    ) -> None:
        check_fixed_scope(scope)
        self.prompt_caching = check_bool(prompt_caching, "prompt_caching")
        memory = TypedMemoryStore.coerce(memory)
        self.memory = memory
        make_classifier(classifier)  # checked here, also when the store comes from the graph
        self.classifier = classifier
        self.scope = scope
        self.load_references = check_bool(load_references, "load_references")
        self.messages_key = check_name(messages_key, "messages_key")
        self.scope_fields = check_scope_fields(scope_fields)
        self.allow_scope_override = check_bool(allow_scope_override, "allow_scope_override")
        self._loader = None if memory is None else self._make_loader(memory)
        self._unscoped = UnscopedWarning("MemoryNode")
        self.metrics = PluginMetrics("typed_memory", "MemoryNode")

    def stats(self, reset: bool = False) -> PluginStats:
        """Counts per turn loaded, as `promptcache.memory.TypedMemoryMiddleware.stats`."""
        return self.metrics.snapshot(reset)

    def _make_loader(self, memory: TypedMemoryStore) -> MemoryLoader:
        return MemoryLoader(
            memory,
            self.classifier,
            load_references=self.load_references,
            messages_key=self.messages_key,
            prompt_caching=self.prompt_caching,
        )

    def _loader_for(self) -> MemoryLoader:
        if self._loader is not None:
            return self._loader
        from langgraph.config import get_store

        store = get_store()
        if store is None:
            raise RuntimeError("MemoryNode(memory=None) needs a graph store: builder.compile(store=...)")
        return self._make_loader(TypedMemoryStore.for_store(store))

    def resolve_scope(self, config: RunnableConfig | None = None) -> str | None:
        """The scope of this call, by the shared rule (`promptcache._config.resolve_scope`). When nothing
        gives one (no per-call scope, no ``scope=``, none of ``scope_fields`` in ``configurable``), logs a warning
        once per node and returns ``None`` (the unscoped memories); pass ``scope=None`` to mean that on purpose."""
        options = memory_call_options(config)
        scope = resolve_scope(options, self.scope, config, self.scope_fields, self.allow_scope_override)
        self._unscoped.check(scope, self.scope is not UNSET or "scope" in (options or {}), self.scope_fields)
        return scope

    def _check(self, input: object, config: RunnableConfig) -> None:
        """Raise `MemoryStateError` for a state that cannot work (module docstring), before any read."""
        if not isinstance(input, Mapping) or self.messages_key not in input:
            keys = sorted(input) if isinstance(input, Mapping) else type(input).__name__
            raise MemoryStateError(
                f"MemoryNode: the state has no {self.messages_key!r} key (got {keys}); build the graph on a state "
                f"with the conversation, e.g. StateGraph(MemoryState) or class State(MessagesState, MemoryState)"
                + ("" if self.messages_key == "messages" else ", or pass messages_key= naming it")
            )
        missing = _missing_channels(config)
        if missing:
            raise MemoryStateError(
                f"MemoryNode: the graph state has no {missing[0]!r} key (missing: {', '.join(missing)}), so "
                f"LangGraph would drop what the node writes; build the graph on StateGraph(MemoryState) or "
                f"class State(MessagesState, MemoryState) instead of MessagesState alone"
            )

    def invoke(
        self, input: Mapping[str, object], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, object]:
        """Run the node on a state dict; returns the `MemoryState` update.

        Raises:
            MemoryStateError: the state has no messages key, or the running graph's state lacks the memory keys.
        """
        config = ensure_config(config)
        self._check(input, config)
        return count_memory_turn(self.metrics, self._loader_for().load(input, self.resolve_scope(config)))

    async def ainvoke(
        self, input: Mapping[str, object], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, object]:
        """Async twin of `invoke`."""
        config = ensure_config(config)
        self._check(input, config)
        return count_memory_turn(self.metrics, await self._loader_for().aload(input, self.resolve_scope(config)))
