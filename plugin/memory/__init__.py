"""Typed memory: user facts, feedback, project state and references on a LangGraph ``BaseStore``.

See docs/architecture.md ("Typed memory") and docs/plugins/typed-memory.md. ``MemoryNode`` / ``MemoryState`` for LangGraph
graphs live in :mod:`promptcache.integrations.langgraph`.
"""

from promptcache.memory.classifier import (
    ChatModelClassifier,
    ConceptualClassifier,
    is_conceptual_question,
    make_classifier,
    work_signals,
)
from promptcache.memory.general_knowledge import followup_signals, general_form
from promptcache.memory.kinds import DEFAULT_PROJECT_STATE_TTL_S, MemoryKind, parse_kind
from promptcache.memory.middleware import MEMORY_CONTEXT_KEY, MemoryAgentState, TypedMemoryMiddleware
from promptcache.memory.namespaces import DEFAULT_PREFIX, UNSCOPED_LABEL, build_namespace
from promptcache.memory.policy import MemoryLoader, MemoryState, conversation, latest_question, render_memory_block
from promptcache.memory.records import TypedMemory, normalise_text
from promptcache.memory.references import find_reference, short_reference_id
from promptcache.memory.store import TypedMemoryStore
from promptcache.memory.subjects import ChatModelSubjectExtractor, derive_subject
from promptcache.memory.tools import make_reference_tool, make_remember_tool

__all__ = [
    "DEFAULT_PREFIX",
    "DEFAULT_PROJECT_STATE_TTL_S",
    "MEMORY_CONTEXT_KEY",
    "UNSCOPED_LABEL",
    "ChatModelClassifier",
    "ChatModelSubjectExtractor",
    "ConceptualClassifier",
    "MemoryAgentState",
    "MemoryKind",
    "MemoryLoader",
    "MemoryState",
    "TypedMemory",
    "TypedMemoryMiddleware",
    "TypedMemoryStore",
    "build_namespace",
    "conversation",
    "derive_subject",
    "find_reference",
    "followup_signals",
    "general_form",
    "is_conceptual_question",
    "latest_question",
    "make_classifier",
    "make_reference_tool",
    "make_remember_tool",
    "normalise_text",
    "parse_kind",
    "render_memory_block",
    "short_reference_id",
    "work_signals",
]
