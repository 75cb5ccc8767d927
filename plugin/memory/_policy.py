"""The load policy of typed memory, shared by ``MemoryNode`` (LangGraph) and ``TypedMemoryMiddleware`` (agents).

Per turn (one user question; docs/architecture.md, "Typed memory"):

- feedback rules: read once per thread, rendered first in the system-prompt section;
- user facts: read once per thread;
- references: read once per thread, rendered as pointers (``[short id] description``), never their contents (the
  agent fetches them with the ``read_reference`` tool);
- project state: read fresh every turn (expired entries never appear), and left out when the latest question is
  conceptual (the classifier says so, from the latest question and the earlier turns). With prompt caching on
  (``prompt_caching=True``: the caching wrapper says so), per conversation instead: a block that already holds
  project state keeps it on a conceptual turn unless leaving it out saves more than the cache writes it causes
  (`promptcache.memory._cache_cost`), so the block's bytes do not flip with each tangent.

"Once per thread" works through state: what was loaded is written to the graph/agent state (`MemoryState`
keys), with the scope it was loaded for; the checkpointer keeps it, so the next turn on the same thread sees it and
does not read the store again. A new thread (empty state) or a different scope reads again, and so does a turn
after a feedback / user-fact / reference memory of that scope was written, replaced or deleted by any worker on the
same store (the scope's version in the store, `write_token`, changed: one ``get`` per
turn).

The rendered block (`promptcache.memory._render`) has a fixed section order and, within a section, memories
oldest first (ties by id), and no timestamps or per-turn text, so the same memories always give the same bytes;
the per-thread part (feedback, user facts, references) is a stable prefix and project state comes last.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypedDict, Union

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.graph import MessagesState

from promptcache._log import ThrottledWarning, get_logger
from promptcache.memory._cache_cost import estimate_tokens, skip_pays
from promptcache.memory._classifier import (
    ConceptualClassifier,
    Turn,
    aclassify,
    classify,
    content_text,
    is_conceptual_question,
    make_classifier,
)
from promptcache.memory._kinds import MemoryKind
from promptcache.memory._namespaces import scope_label
from promptcache.memory._records import TypedMemory
from promptcache.memory._render import render_memory_block
from promptcache.memory._store import TypedMemoryStore

__all__ = ["MEMORY_STATE_KEYS", "MemoryLoader", "MemoryState", "conversation", "latest_question", "render_memory_block"]

_log = get_logger("promptcache.memory")
_classifier_failed = ThrottledWarning(_log)
_corrupt_state = ThrottledWarning(_log)

THREAD_KINDS: tuple[MemoryKind, ...] = (MemoryKind.FEEDBACK, MemoryKind.USER_FACT, MemoryKind.REFERENCE)
_STATE_KEY = {
    MemoryKind.FEEDBACK: "memory_feedback",
    MemoryKind.USER_FACT: "memory_user_facts",
    MemoryKind.REFERENCE: "memory_references",
    MemoryKind.PROJECT_STATE: "memory_project_state",
}


class MemoryTurn(TypedDict):
    """What one turn of the loader did (``MemoryState["memory_turn"]``): the latest question, whether it was
    called conceptual, and the kinds read from the store (``MemoryKind`` values)."""

    question: str
    conceptual: bool
    read: list[str]


def _messages_of(state: Mapping[str, object], key: str) -> Sequence[MessageLike]:
    """``state[key]`` when it is a list of messages (or a tuple); anything else reads as no messages."""
    value = state.get(key)
    return value if isinstance(value, (list, tuple)) else []


class MemoryState(MessagesState, total=False):
    """LangGraph's ``MessagesState`` plus the keys written by ``MemoryNode`` / ``TypedMemoryMiddleware``.

    Use it as the graph state (``StateGraph(MemoryState)``) or mix it into yours the way LangGraph states compose:
    ``class State(MessagesState, MemoryState)``, ``class State(AgentState, MemoryState)`` -- the ``messages`` key
    (with its ``add_messages`` reducer) is the same one in each. Memories are plain dicts
    (`TypedMemory.to_dict`) so any checkpointer can serialise them.

    Keys (besides ``messages``; all optional):
        memory_scope: the scope label the per-thread memories were loaded for.
        memory_version: `TypedMemoryStore.write_token` at load time; a write by any worker on the same
            store (e.g. the ``remember`` tool) changes it, so the next turn reloads.
        memory_feedback / memory_user_facts / memory_references: loaded once per thread.
        memory_project_state: loaded every turn (empty for a conceptual question).
        memory_prompt: the rendered memory block (put it in the system prompt).
        memory_turn: what this turn did: ``{"question", "conceptual", "read": [kinds read from the store]}``.
    """

    memory_scope: str
    memory_version: str
    memory_feedback: list[dict[str, object]]
    memory_user_facts: list[dict[str, object]]
    memory_references: list[dict[str, object]]
    memory_project_state: list[dict[str, object]]
    memory_prompt: str
    memory_turn: MemoryTurn


MEMORY_STATE_KEYS: tuple[str, ...] = (
    "memory_scope",
    "memory_version",
    "memory_feedback",
    "memory_user_facts",
    "memory_references",
    "memory_project_state",
    "memory_prompt",
    "memory_turn",
)
"""The keys `MemoryState` adds to ``MessagesState`` (what the node writes)."""


#: A message as the memory policy reads it: a LangChain message or a ``{"role", "content"}`` dict.
MessageLike = Union[BaseMessage, Mapping[str, object]]


def latest_question(messages: Sequence[MessageLike]) -> str:
    """The text of the last human message in ``messages`` (``BaseMessage`` or ``{"role", "content"}`` dicts); ""."""
    for message in reversed(list(messages or ())):
        if isinstance(message, HumanMessage):
            return content_text(message.content)
        if isinstance(message, Mapping) and message.get("role") in {"user", "human"}:
            return content_text(message.get("content", ""))
        if isinstance(message, BaseMessage) and message.type == "human":
            return content_text(message.content)
    return ""


def _role(message: object) -> str | None:
    if isinstance(message, BaseMessage):
        return {"human": "user", "ai": "assistant"}.get(message.type)
    if isinstance(message, Mapping):
        return {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant"}.get(
            str(message.get("role"))
        )
    return None


def conversation(messages: Sequence[MessageLike]) -> tuple[str, list[Turn]]:
    """The latest user question of ``messages`` and the earlier turns, oldest first, as ``(role, text)`` pairs
    (``"user"`` / ``"assistant"``; system and tool messages and empty texts, e.g. an AI message that only calls
    tools, are left out). ``("", [...])`` when there is no user message."""
    turns: list[Turn] = []
    for message in messages or ():
        role = _role(message)
        if role is None:
            continue
        content = message.content if isinstance(message, BaseMessage) else message.get("content", "")
        text = content_text(content).strip()
        if text or role == "user":
            turns.append((role, text))
    for i in range(len(turns) - 1, -1, -1):
        if turns[i][0] == "user":
            return turns[i][1], turns[:i]
    return "", turns


def conversation_texts(messages: Sequence[MessageLike]) -> list[str]:
    """The texts of every message in ``messages`` (any role, tool results included): what follows the memory
    block in a request, for the cache-cost estimate."""
    out = []
    for message in messages or ():
        content = (
            message.content
            if isinstance(message, BaseMessage)
            else (message.get("content", "") if isinstance(message, Mapping) else "")
        )
        out.append(content_text(content))
    return out


class MemoryLoader:
    """Applies the load policy (module docstring) to a state; used by the node and the middleware.

    Args:
        memory: the `TypedMemoryStore` to read.
        classifier: ``Callable[[str], bool]`` (True = conceptual), a chat model, or ``None`` for the default rules.
            When it raises, the turn uses the default rules (`is_conceptual_question`) and logs it (throttled).
        load_references: include references (as pointers); default True.
        messages_key: the state key holding the conversation (default ``"messages"``).
        prompt_caching: the default of `load`'s ``prompt_caching`` (whether the provider caches the prompt).
    """

    def __init__(
        self,
        memory: TypedMemoryStore,
        classifier: Callable[..., bool] | BaseChatModel | None = None,
        *,
        load_references: bool = True,
        messages_key: str = "messages",
        prompt_caching: bool = False,
    ) -> None:
        if not isinstance(memory, TypedMemoryStore):
            raise TypeError(f"memory must be a TypedMemoryStore, got {type(memory).__name__}")
        self.memory = memory
        self.classifier: ConceptualClassifier = make_classifier(classifier)
        self.thread_kinds = THREAD_KINDS if load_references else THREAD_KINDS[:2]
        self.messages_key = messages_key
        self.prompt_caching = bool(prompt_caching)

    def _from_state(
        self, state: Mapping[str, object], label: str, version: str
    ) -> dict[MemoryKind, list[TypedMemory]] | None:
        """The per-thread memories kept in ``state``, or ``None`` when they must be read from the store: a new
        thread, another scope, a write since (`TypedMemoryStore.write_token`), a kept memory that has expired
        since it was loaded, or one that is not a valid record (e.g. state checkpointed by an older version) --
        logged (throttled), then reloaded."""
        if state.get("memory_scope") != label or state.get("memory_version") != version:
            return None
        kept: dict[MemoryKind, list[TypedMemory]] = {}
        for kind in self.thread_kinds:
            entries = state.get(_STATE_KEY[kind]) or []
            try:
                if not isinstance(entries, list):
                    raise TypeError(f"expected a list, got {type(entries).__name__}")
                kept[kind] = [m if isinstance(m, TypedMemory) else TypedMemory.from_dict(m) for m in entries]
            except (KeyError, TypeError, ValueError) as exc:
                _corrupt_state.warn(
                    "state key %s holds a memory that is not a typed memory; reloading from the store",
                    _STATE_KEY[kind],
                    exc=exc,
                )
                return None
        now = self.memory.clock()
        if any(m.is_expired(now) for memories in kept.values() for m in memories):
            return None  # a kept memory has expired since (e.g. a rule written with ttl_s): read the live set
        return kept

    def _classify(self, question: str, history: list[Turn]) -> bool:
        try:
            return classify(self.classifier, question, history)
        except Exception as exc:  # noqa: BLE001 - a classifier failure must not break the turn
            _classifier_failed.warn("the conceptual-question classifier failed; using the default rules", exc=exc)
            return is_conceptual_question(question, history)

    async def _aclassify(self, question: str, history: list[Turn]) -> bool:
        try:
            return await aclassify(self.classifier, question, history)
        except Exception as exc:  # noqa: BLE001
            _classifier_failed.warn("the conceptual-question classifier failed; using the default rules", exc=exc)
            return is_conceptual_question(question, history)

    def _finish(
        self,
        label: str,
        version: str,
        question: str,
        conceptual: bool,
        kept: dict[MemoryKind, list[TypedMemory]] | None,
        loaded: dict[MemoryKind, list[TypedMemory]],
        with_project: bool,
    ) -> dict[str, object]:
        update: dict[str, object] = {"memory_scope": label, "memory_version": version}
        block: dict[MemoryKind, Sequence[TypedMemory]] = {}
        for kind in self.thread_kinds:
            if kind in loaded:
                update[_STATE_KEY[kind]] = [m.to_dict() for m in loaded[kind]]
                block[kind] = loaded[kind]
            else:
                block[kind] = (kept or {}).get(kind, [])
        project = loaded.get(MemoryKind.PROJECT_STATE, []) if with_project else []
        update["memory_project_state"] = [m.to_dict() for m in project]
        block[MemoryKind.PROJECT_STATE] = project
        update["memory_prompt"] = render_memory_block(block)
        turn: MemoryTurn = {"question": question, "conceptual": conceptual, "read": [k.value for k in loaded]}
        update["memory_turn"] = turn
        return update

    def _held(self, state: Mapping[str, object], label: str) -> bool:
        """Whether the previous turn's block (same thread and scope) held project state (``memory_project_state``
        is what it held; an empty list renders no section, so leaving it out changes nothing)."""
        return state.get("memory_scope") == label and bool(state.get("memory_project_state"))

    def _keep_project(self, state: Mapping[str, object], label: str, caching: bool) -> bool:
        """On a conceptual turn: whether to read project state anyway (caching on and the block holds it)."""
        return caching and self._held(state, label)

    def _with_project(self, state: Mapping[str, object], conceptual: bool, project: list[TypedMemory] | None) -> bool:
        """Whether the block holds project state this turn: always on a work turn; on a conceptual turn whose
        block held it (caching on), unless `skip_pays` says leaving it out saves more than it costs."""
        if not conceptual:
            return True
        if project is None:
            return False
        history = conversation_texts(_messages_of(state, self.messages_key))
        return not skip_pays(estimate_tokens(m.content for m in project), estimate_tokens(history))

    def load(
        self, state: Mapping[str, object], scope: str | None, *, prompt_caching: bool | None = None
    ) -> dict[str, object]:
        """Read what this turn needs and return the state update (`MemoryState` keys).

        A classifier that raises is replaced by the default rules for the turn (logged, throttled); per-thread
        memories in ``state`` that are not valid records are reloaded from the store (logged, throttled).

        Args:
            state: the graph / agent state (``messages`` and the `MemoryState` keys of earlier turns).
            scope: the memory scope (``None``: the unscoped memories).
            prompt_caching: whether the provider caches the prompt (module docstring); ``None``: the loader's
                ``prompt_caching``.

        Raises:
            ValueError / TypeError: a bad scope (empty, containing ``"."``). Store errors propagate.
        """
        caching = self.prompt_caching if prompt_caching is None else bool(prompt_caching)
        label = scope_label(scope)
        question, history = conversation(_messages_of(state, self.messages_key))
        loaded: dict[MemoryKind, list[TypedMemory]] = {}
        version = self.memory.write_token(scope)
        kept = self._from_state(state, label, version)
        if kept is None:
            for kind in self.thread_kinds:
                loaded[kind] = self.memory.list(scope, kind)
        conceptual = self._classify(question, history) if question else False
        if not conceptual or self._keep_project(state, label, caching):
            loaded[MemoryKind.PROJECT_STATE] = self.memory.list(scope, MemoryKind.PROJECT_STATE)
        with_project = self._with_project(state, conceptual, loaded.get(MemoryKind.PROJECT_STATE))
        return self._finish(label, version, question, conceptual, kept, loaded, with_project)

    async def aload(
        self, state: Mapping[str, object], scope: str | None, *, prompt_caching: bool | None = None
    ) -> dict[str, object]:
        """Async twin of `load`."""
        caching = self.prompt_caching if prompt_caching is None else bool(prompt_caching)
        label = scope_label(scope)
        question, history = conversation(_messages_of(state, self.messages_key))
        loaded: dict[MemoryKind, list[TypedMemory]] = {}
        version = await self.memory.awrite_token(scope)
        kept = self._from_state(state, label, version)
        if kept is None:
            for kind in self.thread_kinds:
                loaded[kind] = await self.memory.alist(scope, kind)
        conceptual = await self._aclassify(question, history) if question else False
        if not conceptual or self._keep_project(state, label, caching):
            loaded[MemoryKind.PROJECT_STATE] = await self.memory.alist(scope, MemoryKind.PROJECT_STATE)
        with_project = self._with_project(state, conceptual, loaded.get(MemoryKind.PROJECT_STATE))
        return self._finish(label, version, question, conceptual, kept, loaded, with_project)
