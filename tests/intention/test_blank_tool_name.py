"""An empty or blank tool name is a ``ValueError`` naming the value (like an empty user id or intention), in
``store`` and in ``retrieve``, before anything is written."""

from __future__ import annotations

import pytest

from promptcache import IntentionMemory


@pytest.mark.parametrize("tool", ["", "  "])
def test_store_refuses_a_blank_tool_name(tool: str) -> None:
    memory = IntentionMemory()
    with pytest.raises(ValueError, match=rf"tool must be a non-empty str or None, got {tool!r}"):
        memory.store("u", "weather in Paris", {"t": 1}, tool=tool)
    assert memory.backend.index_size("u") == 0


@pytest.mark.parametrize("tool", ["", "  "])
def test_retrieve_refuses_a_blank_tool_name(tool: str) -> None:
    with pytest.raises(ValueError, match=rf"tool must be a non-empty str or None, got {tool!r}"):
        IntentionMemory().retrieve("u", "weather in Paris", tool=tool)
