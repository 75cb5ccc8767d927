"""Typed memory: user facts, feedback, project state and references on a LangGraph ``BaseStore``.

See docs/architecture.md ("Typed memory") and docs/plugins/typed-memory.md. ``MemoryNode`` / ``MemoryState`` for LangGraph
graphs live in `promptcache.integrations.langgraph`.
"""

from promptcache.memory._classifier import is_conceptual_question
from promptcache.memory._kinds import DEFAULT_PROJECT_STATE_TTL_S, MemoryKind
from promptcache.memory._middleware import TypedMemoryMiddleware
from promptcache.memory._policy import MemoryLoader, MemoryState, render_memory_block
from promptcache.memory._records import TypedMemory
from promptcache.memory._store import TypedMemoryStore
from promptcache.memory._tools import make_reference_tool, make_remember_tool

__all__ = [
    "DEFAULT_PROJECT_STATE_TTL_S",
    "MemoryKind",
    "MemoryLoader",
    "MemoryState",
    "TypedMemory",
    "TypedMemoryMiddleware",
    "TypedMemoryStore",
    "is_conceptual_question",
    "make_reference_tool",
    "make_remember_tool",
    "render_memory_block",
]
