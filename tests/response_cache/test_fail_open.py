"""ResponseCache fails open (dead Redis, raising backend, corrupt entry) and rejects bad input up front."""

from __future__ import annotations

import logging
import socket
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage

from promptcache import InMemoryServerCache, ResponseCache, ServerCache, build_response_cache_key
from promptcache.integrations.redis import RedisCache
from promptcache.testing import ScriptedChatModel


def ask(agent: Any, text: str = "q") -> Any:
    return agent.invoke({"messages": [HumanMessage(text)]})["messages"][-1]


def dead_port() -> int:
    """A local port nobody listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def warnings_from(caplog: Any, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger and r.levelno == logging.WARNING]


def test_redis_stopped_mid_run(redis_url: str, redis_prefix: str, caplog: Any) -> None:
    """Redis "stops" after the first call. The shared server is not stopped (other suites use it): the cache's
    sync client is replaced mid-run by one pointing at a dead local port, which is what a stopped server looks like
    to redis-py (connection refused). Calls go on as misses, nothing is raised, and one warning is logged."""
    import redis

    cache = RedisCache(url=redis_url, prefix=redis_prefix, breaker_s=0.0)  # no circuit break: every call tries
    model = ScriptedChatModel(replies=["a", "b", "c"])
    agent = create_agent(model, tools=[], middleware=[ResponseCache(cache)])
    assert ask(agent).content == "a"
    assert ask(agent).content == "a"  # a hit while Redis is up
    cache.client.close()
    # built like RedisCache(url=...) builds its client (from_url, short timeouts)
    cache.client = redis.Redis.from_url(
        f"redis://127.0.0.1:{dead_port()}/0", socket_connect_timeout=0.25, socket_timeout=0.25
    )
    with caplog.at_level(logging.WARNING, logger="promptcache"):
        assert ask(agent).content == "b"
        assert ask(agent).content == "c"
    assert model.calls == 3
    assert cache.failures == 4  # GET + SET on each of the two calls
    logged = warnings_from(caplog, "promptcache.integrations.redis")
    assert len(logged) == 1 and "Redis GET failed" in logged[0]
    cache.client.close()


class BrokenCache(ServerCache):
    """A ServerCache subclass that raises on every operation (a custom backend without fail-open)."""

    def get(self, key: str) -> bytes | None:
        raise ConnectionError("backend unreachable")

    def set(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        raise ConnectionError("backend unreachable")

    def delete(self, key: str) -> None:
        raise ConnectionError("backend unreachable")

    def clear(self, prefix: str = "") -> int:
        raise ConnectionError("backend unreachable")


@pytest.mark.parametrize("use_async", [False, True])
async def test_raising_backend_is_a_miss_logged_once(use_async: bool, caplog: Any) -> None:
    model = ScriptedChatModel(replies=["a", "b", "c"])
    agent = create_agent(model, tools=[], middleware=[ResponseCache(BrokenCache())])
    with caplog.at_level(logging.WARNING, logger="promptcache"):
        for expected in "abc":
            out = (
                (await agent.ainvoke({"messages": [HumanMessage("q")]}))
                if use_async
                else agent.invoke({"messages": [HumanMessage("q")]})
            )
            assert out["messages"][-1].content == expected
    logged = warnings_from(caplog, "promptcache.response_cache")
    assert len(logged) == 1 and "read failed" in logged[0] and "backend unreachable" in logged[0]


def test_corrupt_entry_is_a_miss_and_is_overwritten(server_cache: Any, caplog: Any) -> None:
    model = ScriptedChatModel(replies=["a", "b", "c"])
    agent = create_agent(model, tools=[], middleware=[ResponseCache(server_cache)])
    key = ask(agent).response_metadata["promptcache"]["key"]
    server_cache.set(key, b"\x80not json", 60)
    with caplog.at_level(logging.WARNING, logger="promptcache"):
        assert ask(agent).content == "b"
    assert any("unreadable" in m for m in warnings_from(caplog, "promptcache.response_cache"))
    hit = ask(agent)
    assert (hit.content, hit.response_metadata["promptcache"]["cache"]) == ("b", "hit")
    server_cache.set(key, b'{"v": 1, "created_at": 1.0, "messages": [{"type": "nope", "data": {}}]}', 60)
    assert ask(agent).content == "c"  # an unknown message type: a miss too


# 11 ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"ttl_s": 0}, ValueError, "ttl_s .*got 0"),
        ({"ttl_s": -5}, ValueError, "got -5"),
        ({"ttl_s": "300"}, TypeError, "ttl_s must be a number.*'300'"),
        ({"ttl_s": None}, TypeError, "ttl_s must be a number.*None"),
        ({"ttl_s": True}, TypeError, "True"),
        ({"key": 42}, TypeError, "key must be a str or a callable.*42"),
        ({"key": ""}, ValueError, "non-empty"),
        ({"bust": "yes"}, TypeError, "bust must be a bool.*'yes'"),
        ({"scope": 3.5}, TypeError, "scope must be a string or None.*3.5"),
        ({"agent_id": ""}, ValueError, "agent_id"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ResponseCache(InMemoryServerCache(), **kwargs)


@pytest.mark.parametrize("cache", [None, {}, "redis://localhost"])
def test_cache_must_be_a_server_cache(cache: Any) -> None:
    with pytest.raises(TypeError, match=f"cache must be a promptcache ServerCache, got .*{cache!r}"):
        ResponseCache(cache)


@pytest.mark.parametrize(
    ("opts", "error", "match"),
    [
        ({"ttl": 5}, ValueError, r"unknown per-call option\(s\) \['ttl'\]"),
        ({"agent_id": "x"}, ValueError, "'agent_id'"),
        ({"cache": None}, ValueError, "'cache'"),
        ({"key": 3}, TypeError, "per-call key must be a str or a callable.*3"),
        ({"bust": 1}, TypeError, "per-call bust must be a bool.*1"),
        ({"scope": ""}, ValueError, "per-call scope must be a non-empty string"),
    ],
)
def test_bad_per_call_options(opts: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ResponseCache.context(**opts)
    config: dict = {"configurable": {}}
    with pytest.raises(error, match=match):
        ResponseCache.apply_context(config, **opts)
    assert config == {"configurable": {}}  # nothing written before the error


def test_build_key_rejects_other_inputs() -> None:
    with pytest.raises(TypeError, match="ResponseCacheKeyInputs, got dict"):
        build_response_cache_key({"agent_id": "a"})  # type: ignore[arg-type]
