"""Options of the wrong type are refused where they enter: a string is not a bool (``serve_repeats="no"``) nor a
list of names (``scope_fields="user_id"``), an empty name matches nothing on purpose (``deny_prefixes=[""]``), a
``clock`` must be callable, and ``get_many`` takes a list of keys, not a string."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from promptcache import InMemoryServerCache, IntentionCache, IntentionMemory, ResponseCache
from promptcache.integrations.langgraph import MemoryNode
from promptcache.intention import make_retrieve_memory_tool
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore, make_reference_tool, make_remember_tool


def _intention_cache(**kw: Any) -> Any:
    return IntentionCache(IntentionMemory(), **kw)


def _retrieve_tool(**kw: Any) -> Any:
    return make_retrieve_memory_tool(IntentionMemory(), **kw)


def _middleware(**kw: Any) -> Any:
    return TypedMemoryMiddleware(TypedMemoryStore(InMemoryStore()), **kw)


def _node(**kw: Any) -> Any:
    return MemoryNode(TypedMemoryStore(InMemoryStore()), **kw)


def _remember(**kw: Any) -> Any:
    return make_remember_tool(TypedMemoryStore(InMemoryStore()), **kw)


def _reference(**kw: Any) -> Any:
    return make_reference_tool(TypedMemoryStore(InMemoryStore()), **kw)


def _response_cache(**kw: Any) -> Any:
    return ResponseCache(InMemoryServerCache(), **kw)


SCOPED: list[Callable[..., Any]] = [_intention_cache, _retrieve_tool, _middleware, _node, _remember, _reference]

CASES = [
    (_intention_cache, "serve_repeats", "no", TypeError),
    (_intention_cache, "serve_repeats", 1, TypeError),
    (_intention_cache, "serve_similar", "yes", TypeError),
    (_intention_cache, "deny_prefixes", [""], ValueError),
    (_intention_cache, "deny_prefixes", "send_", TypeError),
    (_intention_cache, "deny_tools", ["  "], ValueError),
    (_intention_cache, "deny_tools", [3], TypeError),
    (_intention_cache, "allow_tools", "get_weather", TypeError),
    (_intention_cache, "volatile_args", "ts", TypeError),
    (_intention_cache, "retrieve_tool_name", "", ValueError),
    (_intention_cache, "retrieve_tool_name", None, TypeError),
    (_intention_cache, "intention_arg", "", ValueError),
    (_middleware, "load_references", "no", TypeError),
    (_middleware, "reference_tool", "no", TypeError),
    (_node, "load_references", "no", TypeError),
    (_node, "messages_key", "", ValueError),
    (_retrieve_tool, "name", "", ValueError),
    (_remember, "name", "", ValueError),
    (_reference, "name", "", ValueError),
    *[(make, "scope_fields", "user_id", TypeError) for make in SCOPED],
    *[(make, "scope_fields", [""], ValueError) for make in SCOPED],
    *[(make, "scope_fields", [7], TypeError) for make in SCOPED],
    *[(make, "allow_scope_override", "no", TypeError) for make in [*SCOPED, _response_cache]],
]


@pytest.mark.parametrize("make, option, value, exc", CASES, ids=[f"{m.__name__}-{o}-{v!r}" for m, o, v, _ in CASES])
def test_a_bad_option_value_is_refused_naming_the_option_and_the_value(make, option, value, exc):
    with pytest.raises(exc, match=option) as info:
        make(**{option: value})
    assert repr(value) in str(info.value) or repr(value[0]) in str(info.value)


@pytest.mark.parametrize("make", [lambda c: IntentionMemory(clock=c), lambda c: TypedMemoryStore(clock=c)])
def test_a_clock_that_is_not_callable_is_refused(make):
    with pytest.raises(TypeError, match="clock.*'x'"):
        make("x")


def test_get_many_refuses_a_string_of_keys_in_memory():
    cache = InMemoryServerCache()
    cache.set("a", b"1")
    with pytest.raises(TypeError, match="keys.*'abc'"):
        cache.get_many("abc")
    assert cache.get_many(["a", "b"]) == [b"1", None]


def test_get_many_refuses_a_string_of_keys_on_redis(redis_url, redis_prefix):
    from promptcache.integrations.redis import RedisCache

    cache = RedisCache(url=redis_url, prefix=redis_prefix)
    cache.set("a", b"1")
    with pytest.raises(TypeError, match="keys.*'abc'"):
        cache.get_many("abc")
    assert cache.get_many(["a", "b", "c"]) == [b"1", None, None]
    assert cache.stats().errors == 0


async def test_async_get_many_refuses_a_string_of_keys_on_redis(redis_url, redis_prefix):
    from promptcache.integrations.redis import RedisCache

    cache = RedisCache(url=redis_url, prefix=redis_prefix)
    with pytest.raises(TypeError, match="keys.*'abc'"):
        await cache.aget_many("abc")
