"""LangGraph adapters: ``MemoryNode`` and ``MemoryState`` (typed memory in a ``StateGraph``).

Put the node before the model node::

    class State(MessagesState, MemoryState): ...

    builder = StateGraph(State)
    builder.add_node("memory", MemoryNode(TypedMemoryStore.for_store(store)))
    builder.add_node("model", call_model)            # uses state["memory_prompt"] as (part of) the system prompt
    builder.add_edge(START, "memory"); builder.add_edge("memory", "model")
    graph = builder.compile(checkpointer=MemorySaver())

The node follows :mod:`promptcache.memory.policy`: feedback, user facts and references once per thread (kept in
state, so the checkpointer carries them), project state every turn unless the question is conceptual.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config
from langgraph.store.base import BaseStore

from promptcache.config import DEFAULT_SCOPE_FIELDS, UNSET, resolve_scope
from promptcache.memory.middleware import with_memory_prompt
from promptcache.memory.namespaces import check_fixed_scope, memory_call_options
from promptcache.memory.policy import MemoryLoader, MemoryState
from promptcache.memory.store import TypedMemoryStore

__all__ = ["MemoryNode", "MemoryState", "with_memory_prompt"]


class MemoryNode(Runnable[dict, dict]):
    """A LangGraph node that loads typed memories into state (:class:`MemoryState` keys); sync and async.

    Args:
        memory: a :class:`TypedMemoryStore`, a ``BaseStore`` (wrapped with default settings), or ``None`` to use
            the graph's store (``builder.compile(store=...)``) at run time.
        classifier: conceptual-question classifier (``Callable[[str], bool]``, a chat model, or ``None``: the
            default rules of :func:`promptcache.memory.is_conceptual_question`).
        scope: fixed scope; default: the shared rule -- per-call ``configurable["promptcache.memory"]["scope"]``,
            then ``configurable["user_id"]``, then ``configurable["langgraph_auth_user_id"]``. ``None``: unscoped.
        load_references: load references as pointers, ``[short id] description`` (default True); give the model
            :func:`promptcache.memory.make_reference_tool` so it can fetch what a pointer points to.
        messages_key: the state key of the conversation (default ``"messages"``).
        scope_fields: the ``configurable`` fields tried for the scope.

    Raises:
        TypeError: ``memory`` of another type.
        TypeError / ValueError: a bad fixed ``scope`` (empty, or containing ``"."``), at construction.
        ValueError (at run time): a bad resolved scope (e.g. an e-mail ``user_id``), before anything is read.
    """

    name = "memory"

    def __init__(
        self,
        memory: TypedMemoryStore | BaseStore | None = None,
        *,
        classifier: Any = None,
        scope: Any = UNSET,
        load_references: bool = True,
        messages_key: str = "messages",
        scope_fields: tuple[str, ...] = DEFAULT_SCOPE_FIELDS,
    ) -> None:
        check_fixed_scope(scope)
        memory = TypedMemoryStore.coerce(memory)
        self.memory = memory
        self.classifier = classifier
        self.scope = scope
        self.load_references = load_references
        self.messages_key = messages_key
        self.scope_fields = tuple(scope_fields)
        self._loader = None if memory is None else self._make_loader(memory)

    def _make_loader(self, memory: TypedMemoryStore) -> MemoryLoader:
        return MemoryLoader(
            memory, self.classifier, load_references=self.load_references, messages_key=self.messages_key
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
        """The scope of this call, by the shared rule (:func:`promptcache.config.resolve_scope`)."""
        return resolve_scope(memory_call_options(config), self.scope, config, self.scope_fields)

    def invoke(self, input: dict, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        """Run the node on a state dict; returns the :class:`MemoryState` update."""
        config = ensure_config(config)
        return self._loader_for().load(input, self.resolve_scope(config))

    async def ainvoke(self, input: dict, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        """Async twin of :meth:`invoke`."""
        config = ensure_config(config)
        return await self._loader_for().aload(input, self.resolve_scope(config))
