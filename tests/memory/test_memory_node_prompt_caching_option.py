"""``MemoryNode(prompt_caching=)`` is a bool, checked as ``TypedMemoryMiddleware`` checks it (no truthiness)."""

from __future__ import annotations

import pytest


def test_a_memory_node_takes_prompt_caching_as_a_bool_only() -> None:
    from langgraph.store.memory import InMemoryStore

    from promptcache.integrations.langgraph import MemoryNode

    with pytest.raises(TypeError, match="prompt_caching"):
        MemoryNode(InMemoryStore(), prompt_caching="no")  # type: ignore[arg-type]  # the bad value under test
    assert MemoryNode(InMemoryStore(), prompt_caching=True).prompt_caching is True
