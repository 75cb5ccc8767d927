"""A blank ``key`` (only whitespace) is refused like a blank ``scope``, at construction and per call, naming the
value."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from promptcache import ResponseCache, with_processors
from promptcache.backends import InMemoryServerCache
from promptcache.testing import ScriptedChatModel


def test_a_blank_constructor_key_is_refused() -> None:
    with pytest.raises(ValueError, match=r"key must be a non-empty string or a callable, got '  '"):
        ResponseCache(InMemoryServerCache(), key="  ")


def test_a_blank_per_call_key_is_refused_before_the_model_is_called() -> None:
    model = ScriptedChatModel(replies=["a"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    with pytest.raises(ValueError, match=r"per-call key must be a non-empty string or a callable, got '  '"):
        wrapped.invoke([HumanMessage("hi")], config={"configurable": {"promptcache.response_cache": {"key": "  "}}})
    with pytest.raises(ValueError, match=r"per-call key must be a non-empty string or a callable, got '  '"):
        ResponseCache.context(key="  ")
    assert model.calls == 0
