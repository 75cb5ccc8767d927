"""Hardening: every public API attacked with bad input and failing backends, as a hostile but realistic user would.

Each test asserts the CORRECT behaviour (DESIGN.md / the engineering rules):
- bad input: a clear ``TypeError``/``ValueError`` naming the bad value, raised before anything is written;
- a failing or corrupt backend: a miss (or a skipped write) plus one log line, never an exception in the user's call.

A test marked ``xfail(strict=True)`` documents a finding that fails today (the reason says what happens); when the
code is fixed the test passes and strict xfail turns it red, so the marker must then be removed. Real Redis and
PostgreSQL (fixtures in conftest.py), ``ScriptedChatModel`` for chat models, botocore's Stubber for Bedrock.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.store.memory import InMemoryStore

from promptcache import ResponseCache, with_processors
from promptcache.backends import InMemoryServerCache, ServerCache
from promptcache.testing import ScriptedChatModel

NAN, INF = float("nan"), float("inf")
DEAD_REDIS = "redis://127.0.0.1:1/0"


def promptcache_warnings(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("promptcache") and r.levelno >= logging.WARNING]


class EchoModel(ScriptedChatModel):
    """Answers ``echo:<last message text>`` (so concurrent callers can check they got their own reply)."""

    def _next(self, messages):
        with self._lock:
            self.calls += 1
        return AIMessage(content=f"echo:{messages[-1].content}",
                         usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2})


class RaisingCache(ServerCache):
    """A ServerCache subclass whose every method raises (a broken custom backend)."""

    def get(self, key):
        raise RuntimeError("get exploded")

    def set(self, key, value, ttl_s=None):
        raise RuntimeError("set exploded")

    def delete(self, key):
        raise RuntimeError("delete exploded")

    def clear(self, prefix=""):
        raise RuntimeError("clear exploded")

    def get_many(self, keys):
        raise RuntimeError("get_many exploded")

    def ttl(self, key):
        raise RuntimeError("ttl exploded")

    async def aget(self, key):
        raise RuntimeError("aget exploded")

    async def aset(self, key, value, ttl_s=None):
        raise RuntimeError("aset exploded")


# =================================================================================================================
# InMemoryServerCache / ServerCache
# =================================================================================================================
@pytest.mark.parametrize("ttl, exc", [(NAN, ValueError), (INF, ValueError), (-1, ValueError), (0, ValueError),
                                      (True, TypeError), ("300", TypeError)])
def test_memory_cache_rejects_bad_ttl_before_writing(ttl, exc):
    cache = InMemoryServerCache()
    with pytest.raises(exc, match=repr(ttl).replace("(", r"\(").replace(")", r"\)")):
        cache.set("k", b"v", ttl)
    assert cache.get("k") is None and len(cache) == 0


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError),
                                      (None, TypeError)])
def test_memory_cache_rejects_bad_max_entries(bad, exc):
    with pytest.raises(exc, match="max_entries"):
        InMemoryServerCache(max_entries=bad)


@pytest.mark.parametrize("value", ["text", 42, None])
def test_memory_cache_rejects_non_bytes_values(value):
    cache = InMemoryServerCache()
    with pytest.raises(TypeError, match="bytes"):
        cache.set("k", value)
    assert len(cache) == 0


def test_memory_cache_unicode_and_huge_keys_round_trip():
    cache = InMemoryServerCache()
    keys = ["🙂" * 1000, "a:b.c{d}*e\nf", "x" * 100_000, "[glob]?*"]
    for i, key in enumerate(keys):
        cache.set(key, str(i).encode(), 10)
    assert [cache.get(k) for k in keys] == [b"0", b"1", b"2", b"3"]
    assert cache.clear("[glob]") == 1 and cache.get("[glob]?*") is None


def test_memory_cache_8_threads_x_200_ops_stay_consistent():
    cache = InMemoryServerCache(max_entries=50)
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            for i in range(200):
                key = f"k{(t * 7 + i) % 80}"
                cache.set(key, key.encode(), 0.0005 if i % 5 == 0 else None)
                assert cache.get(key) in (None, key.encode())
                assert cache.get_many([key, "k1"])[0] in (None, key.encode())
                cache.ttl(key)
                if i % 50 == 0:
                    cache.clear("k1")
                cache.delete(f"k{i % 80}")
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(worker, range(8)))
    assert errors == []
    assert len(cache) <= 50


@pytest.mark.xfail(strict=True, reason="InMemoryServerCache.get(123) silently returns None while RedisCache.get(123) "
                                       "raises TypeError: key validation differs between backends")
def test_memory_cache_get_rejects_non_string_key_like_redis():
    with pytest.raises(TypeError, match="123"):
        InMemoryServerCache().get(123)


# =================================================================================================================
# RedisCache
# =================================================================================================================
def test_redis_cache_closed_port_is_a_fast_logged_miss(caplog):
    from promptcache.integrations.redis import RedisCache

    cache = RedisCache(url=DEAD_REDIS)
    with caplog.at_level(logging.WARNING):
        assert cache.get("k") is None
        cache.set("k", b"v", 5)
        cache.delete("k")
        assert cache.clear() == 0
        assert cache.get_many(["a", "b"]) == [None, None]
        assert cache.ttl("k") is None
        assert asyncio.run(cache.aget("k")) is None
        asyncio.run(cache.aset("k", b"v", 5))
    assert len(promptcache_warnings(caplog)) == 1
    assert "Connection" in promptcache_warnings(caplog)[0].getMessage()


def test_redis_cache_still_validates_input_when_redis_is_down():
    from promptcache.integrations.redis import RedisCache

    cache = RedisCache(url=DEAD_REDIS)
    with pytest.raises(ValueError, match="nan"):
        cache.set("k", b"v", NAN)
    with pytest.raises(TypeError, match="bytes"):
        cache.set("k", "text")
    with pytest.raises(ValueError, match="non-empty"):
        cache.get("")


def test_redis_cache_clear_treats_glob_characters_literally(redis_cache):
    for key in ["a*b", "axb", "a?c", "a[1]", "a\\z"]:
        redis_cache.set(key, b"1", 30)
    assert redis_cache.clear("a*") == 1
    assert redis_cache.clear("a[") == 1
    assert [redis_cache.get(k) for k in ["a*b", "axb", "a?c", "a[1]", "a\\z"]] == [None, b"1", b"1", None, b"1"]


def test_redis_cache_unicode_newline_and_long_keys_round_trip(redis_cache):
    keys = ["🙂" * 500, "a:b.c{d}*e\nf", "x" * 20_000]
    for i, key in enumerate(keys):
        redis_cache.set(key, str(i).encode(), 30)
    assert redis_cache.get_many(keys) == [b"0", b"1", b"2"]


@pytest.mark.xfail(strict=True, reason="RedisCache.set(ttl_s=1e17) passes validate_ttl (finite, > 0) but Redis rejects "
                                       "the PX value: the write is silently dropped and the circuit breaker opens, so "
                                       "the next, valid write is lost too; should be a ValueError naming ttl_s")
def test_redis_cache_rejects_a_ttl_redis_cannot_store_and_keeps_working(redis_cache):
    with pytest.raises(ValueError, match=r"1e\+17"):
        redis_cache.set("huge", b"x", 1e17)
    redis_cache.set("next", b"y", 10)
    assert redis_cache.get("next") == b"y"


@pytest.mark.xfail(strict=True, reason="a key of the wrong Redis type (WRONGTYPE, a per-key error) is treated as a "
                                       "dead server: the circuit breaker opens and every other key misses for 2 s")
def test_redis_cache_wrongtype_key_is_a_miss_for_that_key_only(redis_cache, redis_client, redis_prefix):
    redis_cache.set("healthy", b"ok", 30)
    redis_client.rpush(redis_prefix + "listkey", "x")  # garbage of another type under the plugin's prefix
    assert redis_cache.get("listkey") is None
    assert redis_cache.get("healthy") == b"ok"


@pytest.mark.xfail(strict=True, reason="RedisCache(socket_timeout_s='abc') is accepted; the first get() then raises "
                                       "TypeError inside the user's call instead of at construction")
def test_redis_cache_rejects_bad_socket_timeout_at_construction(redis_url):
    from promptcache.integrations.redis import RedisCache

    with pytest.raises((TypeError, ValueError), match="abc"):
        RedisCache(url=redis_url, socket_timeout_s="abc")


@pytest.mark.xfail(strict=True, reason="RedisCache(breaker_s=nan) is accepted; after one failure the breaker never "
                                       "closes (monotonic() >= nan is False) and the cache is dead for good")
def test_redis_cache_rejects_nan_breaker(redis_url):
    from promptcache.integrations.redis import RedisCache

    with pytest.raises(ValueError, match="nan"):
        RedisCache(url=redis_url, breaker_s=NAN)


@pytest.mark.xfail(strict=True, reason="RedisCache(url=123) raises AttributeError ('int' object has no attribute "
                                       "'startswith') instead of a TypeError naming url")
def test_redis_cache_rejects_non_string_url():
    from promptcache.integrations.redis import RedisCache

    with pytest.raises(TypeError, match="url"):
        RedisCache(url=123)


# =================================================================================================================
# ResponseCache, context / apply_context, with_processors
# =================================================================================================================
@pytest.mark.parametrize("kwargs, exc, named", [
    (dict(ttl=NAN), ValueError, "nan"), (dict(ttl=-1), ValueError, "-1"), (dict(ttl=True), TypeError, "True"),
    (dict(ttl="300"), TypeError, "300"), (dict(ttl=None), TypeError, "None"), (dict(scope=""), ValueError, "''"),
    (dict(scope=True), TypeError, "True"), (dict(key=""), ValueError, "''"), (dict(key=5), TypeError, "5"),
    (dict(bust="yes"), TypeError, "yes"), (dict(agent_id=""), ValueError, "''"), (dict(agent_id=5), ValueError, "5"),
])
def test_response_cache_constructor_rejects_bad_values(kwargs, exc, named):
    with pytest.raises(exc, match=named):
        ResponseCache(InMemoryServerCache(), **kwargs)


def test_response_cache_constructor_rejects_a_non_cache():
    with pytest.raises(TypeError, match="None"):
        ResponseCache(None)


@pytest.mark.parametrize("call, exc, named", [
    (lambda: ResponseCache.context(bogus=1), ValueError, "bogus"),
    (lambda: ResponseCache.context(bust=1), TypeError, "1"),
    (lambda: ResponseCache.context(key=b"x"), TypeError, "b'x'"),
    (lambda: ResponseCache.context(scope=""), ValueError, "''"),
    (lambda: ResponseCache.apply_context("config", bust=True), TypeError, "config"),
    (lambda: ResponseCache.apply_context({"configurable": 5}, bust=True), TypeError, "5"),
])
def test_response_cache_context_rejects_bad_options(call, exc, named):
    with pytest.raises(exc, match=named):
        call()


def test_response_cache_apply_context_accepts_none_and_scopes_with_separators():
    config = ResponseCache.apply_context(None, scope="a:b.c{d}*\n🙂", bust=True)
    assert config == {"configurable": {"promptcache.response_cache": {"scope": "a:b.c{d}*\n🙂", "bust": True}}}


def test_response_cache_scopes_with_separators_stay_apart():
    model = EchoModel()
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    for scope in ["a:b", "a", "{a}", "a*", "a\nb", "🙂"]:
        wrapped.invoke("q", config=ResponseCache.context(scope=scope))
    assert model.calls == 6


def test_with_processors_rejects_non_models_and_non_processors():
    with pytest.raises(TypeError, match="BaseChatModel"):
        with_processors("gpt", [])
    with pytest.raises(TypeError, match="object"):
        with_processors(ScriptedChatModel(replies=["x"]), [object()])


@pytest.mark.xfail(strict=True, reason="with_processors(model, None) raises a bare \"'NoneType' object is not "
                                       "iterable\" that does not name the processors argument")
def test_with_processors_names_a_missing_processor_list():
    with pytest.raises(TypeError, match="processors"):
        with_processors(ScriptedChatModel(replies=["x"]), None)


def _history_with_big_int():
    return [HumanMessage("charge order"),
            AIMessage(content="", tool_calls=[{"name": "charge", "args": {"order": 2**70}, "id": "c1"}]),
            ToolMessage("charged", tool_call_id="c1")]


_deep: object = "leaf"
for _ in range(300):
    _deep = [_deep]


@pytest.mark.xfail(strict=True, reason="HIGH: the key builder's canonical_json raises (orjson 'Integer exceeds 64-bit "
                                       "range', 'Dict key must ...', 'Recursion limit reached') and ResponseCache "
                                       "lets it escape: the user's model call fails instead of being a logged miss")
@pytest.mark.parametrize("messages", [
    _history_with_big_int(),
    [HumanMessage("x", additional_kwargs={"meta": {(1, 2): 3}})],
    [HumanMessage(content=[{"type": "text", "text": "hi", "extra": _deep}])],
], ids=["tool-args-int-over-64-bit", "tuple-dict-key", "nesting-300"])
def test_response_cache_odd_prompt_content_never_breaks_the_call(messages):
    model = ScriptedChatModel(replies=["ok"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    assert wrapped.invoke(messages).content == "ok"
    assert model.calls == 1


@pytest.mark.xfail(strict=True, reason="HIGH: a model setting that is an int over 64 bits (e.g. seed=2**70) makes the "
                                       "ResponseCache key builder raise TypeError inside the user's call")
def test_response_cache_big_int_setting_never_breaks_the_call():
    model = ScriptedChatModel(replies=["ok"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    assert wrapped.bind(seed=2**70).invoke("hi").content == "ok"


@pytest.mark.xfail(strict=True, reason="canonical JSON writes NaN as null, so a call with setting foo=NaN and one with "
                                       "foo=None share a key: the second is answered from the first's entry")
def test_response_cache_nan_and_none_settings_are_different_keys():
    model = ScriptedChatModel(replies=["first", "second"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    wrapped.bind(foo=NAN).invoke("hi")
    assert wrapped.bind(foo=None).invoke("hi").content == "second"
    assert model.calls == 2


@pytest.mark.xfail(strict=True, reason="a custom (per-call or constructor) key is namespaced only by sha256(scope)[:8] "
                                       "(32 bits): tenants 'tenant-39588' and 'tenant-67738' collide and one gets the "
                                       "other's cached reply (found by brute force in 0.5 s)")
def test_response_cache_custom_key_never_hits_across_tenants():
    assert hashlib.sha256(b"tenant-39588").hexdigest()[:8] == hashlib.sha256(b"tenant-67738").hexdigest()[:8]
    model = ScriptedChatModel(replies=["secret of 39588", "answer for 67738"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache(), key="faq")])
    wrapped.invoke("q", config={"configurable": {"user_id": "tenant-39588"}})
    reply = wrapped.invoke("q", config={"configurable": {"user_id": "tenant-67738"}})
    assert reply.content == "answer for 67738"


@pytest.mark.xfail(strict=True, reason="per-call options written into the config by hand (not via context()) are not "
                                       "validated: bust='no' is truthy and busts the cache")
def test_response_cache_hand_written_per_call_bust_is_validated():
    wrapped = with_processors(ScriptedChatModel(replies=["a", "b"]), [ResponseCache(InMemoryServerCache())])
    with pytest.raises(TypeError, match="no"):
        wrapped.invoke("hi", config={"configurable": {"promptcache.response_cache": {"bust": "no"}}})


@pytest.mark.parametrize("user_id, exc", [({"a": 1}, TypeError), (True, TypeError), ("  ", ValueError)])
def test_response_cache_bad_configurable_user_id_is_named(user_id, exc):
    model = ScriptedChatModel(replies=["a"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    with pytest.raises(exc, match="user_id"):
        wrapped.invoke("hi", config={"configurable": {"user_id": user_id}})
    assert model.calls == 0


@pytest.mark.parametrize("method", ["invoke", "ainvoke", "stream", "astream"])
def test_response_cache_backend_raising_on_every_method_is_a_logged_miss(method, caplog):
    model = ScriptedChatModel(replies=["ok"])
    wrapped = with_processors(model, [ResponseCache(RaisingCache())])
    with caplog.at_level(logging.WARNING):
        if method == "invoke":
            text = wrapped.invoke("hi").content
        elif method == "ainvoke":
            text = asyncio.run(wrapped.ainvoke("hi")).content
        elif method == "stream":
            text = "".join(c.content for c in wrapped.stream("hi"))
        else:
            async def collect():
                return "".join([c.content async for c in wrapped.astream("hi")])
            text = asyncio.run(collect())
    assert text == "ok" and model.calls == 1
    assert len(promptcache_warnings(caplog)) == 1  # read failed, write failed: one line a minute


@pytest.mark.parametrize("garbage", [
    b"\xff\xfe", b"", b"null", b"{}", b'{"v":1,"created_at":"x","messages":[]}',
    b'{"v":1,"created_at":1,"messages":[{"type":"ai","data":{"content":5}}]}',
    b'{"v":1,"created_at":1,"messages":[{"type":"ai","data":{"content":"x","tool_calls":[{"name":5}]}}]}',
    b'{"v":1,"created_at":1,"messages":[{"type":"ai","data":{"content":"x","usage_metadata":{"input_tokens":"a"}}}]}',
])
def test_response_cache_corrupt_redis_entry_is_a_logged_miss(garbage, redis_cache, redis_client, redis_prefix, caplog):
    model = ScriptedChatModel(replies=["first", "second"])
    wrapped = with_processors(model, [ResponseCache(redis_cache)])
    key = wrapped.invoke("hi").response_metadata["promptcache"]["key"]
    redis_client.set(redis_prefix + key, garbage)
    with caplog.at_level(logging.WARNING):
        reply = wrapped.invoke("hi")
    assert reply.content == "second" and model.calls == 2
    assert reply.response_metadata["promptcache"]["cache"] == "miss"
    assert len(promptcache_warnings(caplog)) == 1


def test_response_cache_redis_on_closed_port_is_a_miss():
    from promptcache.integrations.redis import RedisCache

    model = ScriptedChatModel(replies=["a", "b"])
    wrapped = with_processors(model, [ResponseCache(RedisCache(url=DEAD_REDIS))])
    assert [wrapped.invoke("hi").content, wrapped.invoke("hi").content] == ["a", "b"]


def test_response_cache_8_threads_x_200_calls_get_their_own_replies():
    model = EchoModel()
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])

    def worker(t: int) -> list[bool]:
        return [wrapped.invoke(f"q{(t + i) % 10}").content == f"echo:q{(t + i) % 10}" for i in range(200)]

    with ThreadPoolExecutor(8) as pool:
        results = [ok for chunk in pool.map(worker, range(8)) for ok in chunk]
    assert len(results) == 1600 and all(results)
    assert 10 <= model.calls <= 80  # each prompt is a miss at most once per thread


def test_response_cache_cancelled_call_stores_nothing(server_cache):
    class Slow(ScriptedChatModel):
        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
            await asyncio.sleep(5)
            return await super()._agenerate(messages, stop, run_manager, **kwargs)

    model = Slow(replies=["late", "fresh"])
    wrapped = with_processors(model, [ResponseCache(server_cache)])

    async def cancel_midway():
        task = asyncio.create_task(wrapped.ainvoke("q"))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_midway())
    assert server_cache.clear() == 0


def test_response_cache_model_error_propagates_and_stores_nothing():
    cache = InMemoryServerCache()
    wrapped = with_processors(ScriptedChatModel(error=RuntimeError("provider down")), [ResponseCache(cache)])
    with pytest.raises(RuntimeError, match="provider down"):
        wrapped.invoke("q")
    with pytest.raises(RuntimeError, match="provider down"):
        list(wrapped.stream("q"))
    assert len(cache) == 0


def test_response_cache_abandoned_streams_store_nothing():
    cache = InMemoryServerCache()
    model = ScriptedChatModel(replies=["one two three four", "again", "third"])
    wrapped = with_processors(model, [ResponseCache(cache)])
    stream = wrapped.stream("q")
    next(stream)
    stream.close()

    async def abandon():
        agen = wrapped.astream("q")
        async for _ in agen:
            break
        await agen.aclose()

    asyncio.run(abandon())
    assert len(cache) == 0
    assert wrapped.invoke("q").response_metadata["promptcache"]["cache"] == "miss"


def test_response_cache_raising_key_function_falls_back_to_default_key(caplog):
    def key(inputs):
        raise KeyError("boom")

    wrapped = with_processors(ScriptedChatModel(replies=["a"]), [ResponseCache(InMemoryServerCache(), key=key)])
    with caplog.at_level(logging.WARNING):
        reply = wrapped.invoke("q")
    assert reply.content == "a" and ":key:" not in reply.response_metadata["promptcache"]["key"]
    assert len(promptcache_warnings(caplog)) == 1


def test_response_cache_emoji_and_huge_prompt():
    model = ScriptedChatModel(replies=["ok"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    assert wrapped.invoke("🙂" * 100_000).content == "ok"
    assert wrapped.invoke("🙂" * 100_000).response_metadata["promptcache"]["cache"] == "hit"
    assert model.calls == 1
