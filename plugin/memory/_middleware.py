"""``TypedMemoryMiddleware``: the typed-memory load policy as a processor for ``create_agent``.

``before_agent`` (once per agent invocation, i.e. once per user turn -- not once per model step of a tool loop)
loads memories into the agent state with `MemoryLoader`; the agent's checkpointer keeps them, which is what
makes feedback and user facts "once per thread". ``process_request`` then adds the rendered block
(``memory_prompt``) to the system message of every model call of the turn, after the agent's system prompt
(`with_memory_prompt`), on a copy of the request: with caching on a Bedrock Converse model as its own block after a
cache point; otherwise a string system prompt stays a string.

Prompt caching: ``prompt_caching=`` tells the load decision whether the provider caches the prompt
(`promptcache.memory._cache_cost`: with caching, project state is kept or skipped per conversation). Pass
``True``/``False``, or the object that does the caching -- a ``BedrockCachePoints`` processor or a
``CachePointChatBedrockConverse`` model -- whose ``caches_prompts`` attribute says so. Left ``None``, a model call
whose model has ``caches_prompts`` true (the middleware sits inside ``BedrockCachePoints`` in the list) turns it on
from the next turn. With caching on and a Bedrock Converse model, a cache point separates the system prompt from
the memory block (`MEMORY_CACHE_POINT`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, cast

from langchain.agents.middleware import AgentState, ModelRequest
from langchain_core.language_models import BaseChatModel
from langgraph.store.base import BaseStore

from promptcache._config import DEFAULT_SCOPE_FIELDS, UNSET
from promptcache._metrics import PluginMetrics, PluginStats
from promptcache._option_checks import check_bool, check_scope_fields
from promptcache._processor import Processor
from promptcache._savings import count_memory_turn
from promptcache.memory._classifier import make_classifier
from promptcache.memory._namespaces import (
    MEMORY_CONTEXT_KEY,
    MEMORY_CONTEXT_OPTIONS,
    UnscopedWarning,
    check_fixed_scope,
    scope_label,
)
from promptcache.memory._policy import MemoryLoader, MemoryState
from promptcache.memory._render import MEMORY_CACHE_POINT, with_memory_prompt
from promptcache.memory._store import TypedMemoryStore
from promptcache.memory._tools import make_reference_tool

__all__ = ["MEMORY_CONTEXT_KEY", "MemoryAgentState", "TypedMemoryMiddleware", "with_memory_prompt"]


class MemoryAgentState(MemoryState, AgentState):
    """``AgentState`` plus the `MemoryState` keys (``AgentState``'s own
    ``messages`` definition wins: it is the later base)."""


class TypedMemoryMiddleware(Processor):
    """Load typed memories for each turn of a ``create_agent`` agent and add them to the system prompt.

    Args:
        memory: a `TypedMemoryStore`, a LangGraph ``BaseStore`` (wrapped with default settings), or
            ``None`` to use the agent's store (``create_agent(..., store=...)``) at run time.
        classifier: conceptual-question classifier (``Callable[[str], bool]``, a chat model, or ``None`` for the
            default rules).
        scope: fixed scope; default: the shared rule (per-call ``scope`` via `context`, then
            ``configurable["user_id"]``, then ``configurable["langgraph_auth_user_id"]``). ``None``: unscoped.
        load_references: render references as pointers (default True).
        reference_tool: with ``load_references``, also give the agent the ``read_reference`` tool
            (`make_reference_tool`, same store and scope rule) so it can fetch what a
            pointer points to (default True; pass False when you add your own).
        scope_fields: the ``configurable`` fields tried for the scope.
        allow_scope_override: let a per-call ``scope`` or ``configurable["user_id"]`` differ from the
            authenticated ``configurable["langgraph_auth_user_id"]`` (default False: such a turn raises
            ``PermissionError`` before any read); only for deployments whose configs come from trusted code.
        prompt_caching: whether the provider caches the prompt (module docstring): a bool, an object with a
            ``caches_prompts`` attribute (``BedrockCachePoints``, ``CachePointChatBedrockConverse``), or ``None``
            (learned from the request's model).

    Per call: ``TypedMemoryMiddleware.context(scope=...)`` / ``apply_context(config, scope=...)`` (read by this
    middleware, ``MemoryNode`` and the memory tools alike); the scope is checked at once like a fixed one (a
    non-empty string or int without ``"."``, or ``None`` for the unscoped memories).

    Raises:
        TypeError: ``memory`` of another type; ``classifier`` neither a callable nor a chat model;
            ``load_references``, ``reference_tool`` or ``allow_scope_override`` not a bool; ``scope_fields`` a
            single ``str``.
        TypeError / ValueError: a bad fixed ``scope`` (empty, containing ``"."``), at construction; a bad per-call
            ``scope`` (empty, a float, bool or dict, containing ``"."``) in ``context``/``apply_context``.
        RuntimeError (at run time): ``memory=None`` and the agent has no store.
    """

    context_key: ClassVar[str | None] = MEMORY_CONTEXT_KEY
    context_options: ClassVar[frozenset[str]] = MEMORY_CONTEXT_OPTIONS
    state_schema = MemoryAgentState

    def __init__(
        self,
        memory: TypedMemoryStore | BaseStore | None = None,
        *,
        classifier: Callable[..., bool] | BaseChatModel | None = None,
        scope: Any = UNSET,  # kept as Processor._scope (declared str | None | UNSET); an int passes scope_label too
        load_references: bool = True,
        reference_tool: bool = True,
        scope_fields: tuple[str, ...] = DEFAULT_SCOPE_FIELDS,
        allow_scope_override: bool = False,
        prompt_caching: object = None,
    ) -> None:
        super().__init__()
        if prompt_caching is not None and not isinstance(prompt_caching, bool):
            if not hasattr(prompt_caching, "caches_prompts"):
                raise TypeError(
                    "prompt_caching must be a bool, None or an object with a caches_prompts attribute "
                    f"(BedrockCachePoints), got {type(prompt_caching).__name__}"
                )
        self._prompt_caching = prompt_caching
        self._caching_seen = False
        check_fixed_scope(scope)
        memory = TypedMemoryStore.coerce(memory)
        self._memory = memory
        make_classifier(classifier)  # checked here, also when the store comes from the agent
        self._classifier = classifier
        self._load_references = check_bool(load_references, "load_references")
        check_bool(reference_tool, "reference_tool")
        self._scope = scope
        self.scope_fields = check_scope_fields(scope_fields)
        self.allow_scope_override = check_bool(allow_scope_override, "allow_scope_override")
        self._unscoped = UnscopedWarning("TypedMemoryMiddleware")
        self._loader = None if memory is None else MemoryLoader(memory, classifier, load_references=load_references)
        self.tools = (
            [
                make_reference_tool(
                    memory, scope=scope, scope_fields=self.scope_fields, allow_scope_override=allow_scope_override
                )
            ]
            if load_references and reference_tool
            else []
        )
        self.metrics = PluginMetrics("typed_memory", "TypedMemoryMiddleware")

    def stats(self, reset: bool = False) -> PluginStats:
        """Counts per turn loaded: ``hits`` (the thread's feedback, user facts and references came from the agent
        state: no store read), ``misses`` (they were read from the store). Tokens and dollars are not known here
        (the memory block adds to the prompt). Also sent to OpenTelemetry (`promptcache._metrics`)."""
        return self.metrics.snapshot(reset)

    @classmethod
    def _check_option_values(cls, opts: Mapping[str, object]) -> None:
        """A per-call ``scope`` must be a valid namespace label or ``None`` (`scope_label`), checked when
        `context` / `apply_context` is called, before any run."""
        if "scope" in opts:
            scope_label(opts["scope"], what="per-call scope")

    def _loader_for(self, runtime: object) -> MemoryLoader:
        if self._loader is not None:
            return self._loader
        store = getattr(runtime, "store", None)
        if store is None:
            raise RuntimeError("TypedMemoryMiddleware(memory=None) needs an agent store: create_agent(..., store=...)")
        return MemoryLoader(TypedMemoryStore.for_store(store), self._classifier, load_references=self._load_references)

    def _turn_scope(self) -> str | None:
        scope = self.resolve_scope()
        self._unscoped.check(scope, self._scope is not UNSET or "scope" in self.call_options(), self.scope_fields)
        return scope

    @property
    def prompt_caching(self) -> bool:
        """Whether the load decision counts the prompt cache (module docstring)."""
        given = self._prompt_caching
        if given is None:
            return self._caching_seen
        if isinstance(given, bool):
            return given
        return bool(getattr(given, "caches_prompts", False))

    # the return type is AgentMiddleware's (a state update of any values)
    def before_agent(self, state: object, runtime: object) -> dict[str, Any] | None:
        """Load this turn's memories into the agent state (see the module docstring); no scope found -> one
        warning per middleware (`UnscopedWarning`).

        Raises:
            TypeError: ``state`` is not a mapping (an agent state is a dict).
        """
        loader = self._loader_for(runtime)
        return count_memory_turn(
            self.metrics, loader.load(_state_mapping(state), self._turn_scope(), prompt_caching=self.prompt_caching)
        )

    async def abefore_agent(self, state: object, runtime: object) -> dict[str, Any] | None:
        """Async twin of `before_agent`."""
        loader = self._loader_for(runtime)
        update = await loader.aload(_state_mapping(state), self._turn_scope(), prompt_caching=self.prompt_caching)
        return count_memory_turn(self.metrics, update)

    def process_request(self, request: ModelRequest) -> ModelRequest:
        """Add ``state["memory_prompt"]`` to the system message, on a new request: as its own block after a cache
        point when caching is on and the model is a Bedrock Converse model; otherwise after the system prompt in the
        same type (a string stays a string: `with_memory_prompt`)."""
        if getattr(request.model, "caches_prompts", False):
            self._caching_seen = True
        # MemoryState's ``memory_prompt`` (a str the loader wrote), a key the agent's state type does not declare
        prompt = cast("str | None", (request.state or {}).get("memory_prompt"))
        if not prompt:
            return request
        point = MEMORY_CACHE_POINT if self.prompt_caching and _is_converse(request.model) else None
        return request.override(system_message=with_memory_prompt(request.system_message, prompt, cache_point=point))


def _state_mapping(state: object) -> Mapping[str, object]:
    """The agent state as a mapping.

    Raises:
        TypeError: not a mapping.
    """
    if not isinstance(state, Mapping):
        raise TypeError(f"the agent state must be a mapping, got {type(state).__name__}")
    return state


def _is_converse(model: object) -> bool:
    """Whether ``model`` is a langchain-aws ``ChatBedrockConverse`` (by class name: langchain-aws is an extra)."""
    return any(cls.__name__ == "ChatBedrockConverse" for cls in type(model).__mro__)
