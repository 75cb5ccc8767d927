"""A classifier that is neither a callable nor a chat model is refused when the middleware or node is built,
also without ``memory=`` (the store then comes from the agent at run time), instead of failing every call."""

from __future__ import annotations

import re

import pytest

from promptcache.integrations.langgraph import MemoryNode
from promptcache.memory import TypedMemoryMiddleware

MESSAGE = re.escape("classifier must be a callable(str) -> bool or a chat model, got 5")


def test_middleware_refuses_a_bad_classifier_without_memory() -> None:
    with pytest.raises(TypeError, match=MESSAGE):
        TypedMemoryMiddleware(classifier=5)  # type: ignore[arg-type]


def test_memory_node_refuses_a_bad_classifier_without_memory() -> None:
    with pytest.raises(TypeError, match=MESSAGE):
        MemoryNode(classifier=5)  # type: ignore[arg-type]


def test_a_callable_classifier_is_kept() -> None:
    def rule(question: str) -> bool:
        return question.startswith("what")

    assert MemoryNode(classifier=rule).classifier is rule
