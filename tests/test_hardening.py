"""Hardening: every public API attacked with bad input and failing backends, as a hostile but realistic user would.

Each test asserts the CORRECT behaviour (docs/architecture.md / the engineering rules):
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
        return AIMessage(
            content=f"echo:{messages[-1].content}",
            usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
        )


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
@pytest.mark.parametrize(
    "ttl, exc",
    [(NAN, ValueError), (INF, ValueError), (-1, ValueError), (0, ValueError), (True, TypeError), ("300", TypeError)],
)
def test_memory_cache_rejects_bad_ttl_before_writing(ttl, exc):
    cache = InMemoryServerCache()
    with pytest.raises(exc, match=repr(ttl).replace("(", r"\(").replace(")", r"\)")):
        cache.set("k", b"v", ttl)
    assert cache.get("k") is None and len(cache) == 0


@pytest.mark.parametrize(
    "bad, exc", [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError), (None, TypeError)]
)
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


def test_redis_cache_rejects_a_ttl_redis_cannot_store_and_keeps_working(redis_cache):
    with pytest.raises(ValueError, match=r"1e\+17"):
        redis_cache.set("huge", b"x", 1e17)
    redis_cache.set("next", b"y", 10)
    assert redis_cache.get("next") == b"y"


def test_redis_cache_wrongtype_key_is_a_miss_for_that_key_only(redis_cache, redis_client, redis_prefix):
    redis_cache.set("healthy", b"ok", 30)
    redis_client.rpush(redis_cache.full_key("listkey"), "x")  # garbage of another type under the plugin's prefix
    assert redis_cache.get("listkey") is None
    assert redis_cache.get("healthy") == b"ok"


def test_redis_cache_rejects_bad_socket_timeout_at_construction(redis_url):
    from promptcache.integrations.redis import RedisCache

    with pytest.raises((TypeError, ValueError), match="abc"):
        RedisCache(url=redis_url, socket_timeout_s="abc")


def test_redis_cache_rejects_nan_breaker(redis_url):
    from promptcache.integrations.redis import RedisCache

    with pytest.raises(ValueError, match="nan"):
        RedisCache(url=redis_url, breaker_s=NAN)


def test_redis_cache_rejects_non_string_url():
    from promptcache.integrations.redis import RedisCache

    with pytest.raises(TypeError, match="url"):
        RedisCache(url=123)


# =================================================================================================================
# ResponseCache, context / apply_context, with_processors
# =================================================================================================================
@pytest.mark.parametrize(
    "kwargs, exc, named",
    [
        (dict(ttl=NAN), ValueError, "nan"),
        (dict(ttl=-1), ValueError, "-1"),
        (dict(ttl=True), TypeError, "True"),
        (dict(ttl="300"), TypeError, "300"),
        (dict(ttl=None), TypeError, "None"),
        (dict(scope=""), ValueError, "''"),
        (dict(scope=True), TypeError, "True"),
        (dict(key=""), ValueError, "''"),
        (dict(key=5), TypeError, "5"),
        (dict(bust="yes"), TypeError, "yes"),
        (dict(agent_id=""), ValueError, "''"),
        (dict(agent_id=5), TypeError, "5"),
    ],
)
def test_response_cache_constructor_rejects_bad_values(kwargs, exc, named):
    with pytest.raises(exc, match=named):
        ResponseCache(InMemoryServerCache(), **kwargs)


def test_response_cache_constructor_rejects_a_non_cache():
    with pytest.raises(TypeError, match="None"):
        ResponseCache(None)


@pytest.mark.parametrize(
    "call, exc, named",
    [
        (lambda: ResponseCache.context(bogus=1), ValueError, "bogus"),
        (lambda: ResponseCache.context(bust=1), TypeError, "1"),
        (lambda: ResponseCache.context(key=b"x"), TypeError, "b'x'"),
        (lambda: ResponseCache.context(scope=""), ValueError, "''"),
        (lambda: ResponseCache.apply_context("config", bust=True), TypeError, "config"),
        (lambda: ResponseCache.apply_context({"configurable": 5}, bust=True), TypeError, "5"),
    ],
)
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


def test_with_processors_names_a_missing_processor_list():
    with pytest.raises(TypeError, match="processors"):
        with_processors(ScriptedChatModel(replies=["x"]), None)


def _history_with_big_int():
    return [
        HumanMessage("charge order"),
        AIMessage(content="", tool_calls=[{"name": "charge", "args": {"order": 2**70}, "id": "c1"}]),
        ToolMessage("charged", tool_call_id="c1"),
    ]


_deep: object = "leaf"
for _ in range(300):
    _deep = [_deep]


@pytest.mark.parametrize(
    "messages",
    [
        _history_with_big_int(),
        [HumanMessage("x", additional_kwargs={"meta": {(1, 2): 3}})],
        [HumanMessage(content=[{"type": "text", "text": "hi", "extra": _deep}])],
    ],
    ids=["tool-args-int-over-64-bit", "tuple-dict-key", "nesting-300"],
)
def test_response_cache_odd_prompt_content_never_breaks_the_call(messages):
    model = ScriptedChatModel(replies=["ok"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    assert wrapped.invoke(messages).content == "ok"
    assert model.calls == 1


def test_response_cache_big_int_setting_never_breaks_the_call():
    model = ScriptedChatModel(replies=["ok"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    assert wrapped.bind(seed=2**70).invoke("hi").content == "ok"


def test_response_cache_nan_and_none_settings_are_different_keys():
    model = ScriptedChatModel(replies=["first", "second"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    wrapped.bind(foo=NAN).invoke("hi")
    assert wrapped.bind(foo=None).invoke("hi").content == "second"
    assert model.calls == 2


def test_response_cache_custom_key_never_hits_across_tenants():
    assert hashlib.sha256(b"tenant-39588").hexdigest()[:8] == hashlib.sha256(b"tenant-67738").hexdigest()[:8]
    model = ScriptedChatModel(replies=["secret of 39588", "answer for 67738"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache(), key="faq")])
    wrapped.invoke("q", config={"configurable": {"user_id": "tenant-39588"}})
    reply = wrapped.invoke("q", config={"configurable": {"user_id": "tenant-67738"}})
    assert reply.content == "answer for 67738"


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


@pytest.mark.parametrize(
    "garbage",
    [
        b"\xff\xfe",
        b"",
        b"null",
        b"{}",
        b'{"v":1,"created_at":"x","messages":[]}',
        b'{"v":1,"created_at":1,"messages":[{"type":"ai","data":{"content":5}}]}',
        b'{"v":1,"created_at":1,"messages":[{"type":"ai","data":{"content":"x","tool_calls":[{"name":5}]}}]}',
        b'{"v":1,"created_at":1,"messages":[{"type":"ai","data":{"content":"x","usage_metadata":{"input_tokens":"a"}}}]}',
    ],
)
def test_response_cache_corrupt_redis_entry_is_a_logged_miss(garbage, redis_cache, redis_client, redis_prefix, caplog):
    model = ScriptedChatModel(replies=["first", "second"])
    wrapped = with_processors(model, [ResponseCache(redis_cache)])
    key = wrapped.invoke("hi").response_metadata["promptcache"]["key"]
    redis_client.set(redis_cache.full_key(key), garbage)
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


# =================================================================================================================
# Bedrock cache points: get_model_info, MultiPointStrategy / CacheStrategyConfig, CachePointChatBedrockConverse,
# BedrockCachePoints
# =================================================================================================================
CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"
CLAUDE_BASE = "anthropic.claude-sonnet-4-20250514-v1:0"


@pytest.mark.parametrize("model_id, exc", [(None, TypeError), (5, TypeError), ("", ValueError), ("   ", ValueError)])
def test_get_model_info_rejects_bad_ids(model_id, exc):
    from promptcache.cache_points import get_model_info

    with pytest.raises(exc, match="model_id"):
        get_model_info(model_id)


@pytest.mark.parametrize(
    "overrides, exc, named",
    [
        (dict(min_tokens_per_cache_point=-1), ValueError, "-1"),
        (dict(min_tokens_per_cache_point=True), TypeError, "True"),
        (dict(min_tokens_per_cache_point=NAN), TypeError, "nan"),
        (dict(max_cache_points=1.5), TypeError, "1.5"),
        (dict(bogus=1), TypeError, "bogus"),
        (dict(cachable_fields=("system", "images")), ValueError, "images"),
        (dict(allowed_ttls=("2h",)), ValueError, "2h"),
    ],
)
def test_get_model_info_rejects_bad_overrides(overrides, exc, named):
    from promptcache.cache_points import get_model_info

    with pytest.raises(exc, match=named):
        get_model_info(CLAUDE, **overrides)


def test_get_model_info_resolves_odd_but_valid_ids():
    from promptcache.cache_points import get_model_info

    assert get_model_info(CLAUDE + "\n").model_id == CLAUDE_BASE
    assert get_model_info("arn:aws:bedrock:us-east-1:123:inference-profile/" + CLAUDE).model_id == CLAUDE_BASE
    unknown = get_model_info("🙂-model")
    assert (unknown.supports_prompt_cache, unknown.max_cache_points) == (False, 0)


def test_model_info_rejects_non_bool_supports_prompt_cache():
    from promptcache.cache_points import get_model_info

    with pytest.raises(TypeError, match="no"):
        get_model_info(CLAUDE, supports_prompt_cache="no")


def _strategy(**overrides):
    from promptcache.cache_points import CacheStrategyConfig, MultiPointStrategy, get_model_info

    config = dict(
        model_info=get_model_info(CLAUDE, min_tokens_per_cache_point=2),
        system_prompt="sys",
        messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "yo"},
            {"role": "user", "content": "q"},
        ],
        count_tokens=lambda m: 5,
    )
    config.update(overrides)
    return MultiPointStrategy(CacheStrategyConfig(**config)).determine_optimal_cache_points()


@pytest.mark.parametrize(
    "overrides, exc, named",
    [
        (dict(messages=None), TypeError, "NoneType"),
        (dict(messages={"role": "user"}), TypeError, "dict"),
        (dict(messages=[None]), TypeError, r"messages\[0\]"),
        (dict(messages=[{"role": "system", "content": "x"}]), ValueError, "system"),
        (dict(messages=[{"content": "x"}]), ValueError, "None"),
        (dict(system_prompt=42), TypeError, "42"),
        (dict(count_tokens=5), TypeError, "5"),
        (dict(count_tokens=lambda m: NAN), ValueError, "nan"),
        (dict(count_tokens=lambda m: True), ValueError, "True"),
        (dict(count_tokens=lambda m: 3.5), ValueError, "3.5"),
        (dict(max_points=-1), ValueError, "-1"),
        (dict(max_points=True), ValueError, "True"),
        (dict(ttl=5), ValueError, "5"),
        (dict(ttl="1h"), ValueError, "1h"),
        (dict(ttl=""), ValueError, "''"),
        (dict(previous_placements=[{"index": -1}]), ValueError, "-1"),
        (dict(previous_placements=[{"index": "0"}]), ValueError, "'0'"),
        (dict(previous_placements=[None]), TypeError, "None"),
        (dict(model_info={}), TypeError, "dict"),
    ],
)
def test_cache_strategy_config_rejects_bad_input(overrides, exc, named):
    with pytest.raises(exc, match=named):
        _strategy(**overrides)


@pytest.mark.parametrize(
    "previous",
    [
        [{"index": 10**9}],
        [{"index": 1}],
        [{"index": 0, "fingerprint": 42}],
        [{"index": 2, "type": "system"}],
        [{"index": i} for i in range(50)],
    ],
    ids=["out-of-range", "assistant-message", "wrong-fingerprint", "system-type", "fifty"],
)
def test_strategy_survives_stale_or_absurd_previous_placements(previous):
    result = _strategy(previous_placements=previous)
    assert result.points_used <= 4
    assert all(result.messages[p.index]["role"] == "user" for p in result.placements)


def test_strategy_counts_huge_emoji_content_with_the_default_counter():
    result = _strategy(messages=[{"role": "user", "content": "🙂" * 20_000}], count_tokens=None)
    assert [p.index for p in result.placements] == [0] and result.message_tokens[0] > 20_000


def test_strategy_names_a_message_with_non_text_content():
    with pytest.raises((TypeError, ValueError), match=r"messages\[0\]"):
        _strategy(messages=[{"role": "user", "content": 42}], count_tokens=None)


def test_strategy_rejects_a_message_without_content():
    with pytest.raises((TypeError, ValueError), match=r"messages\[0\]"):
        _strategy(messages=[{"role": "user", "content": None}], count_tokens=None)


def _bedrock_model(**kwargs):
    import boto3
    from botocore.stub import Stubber

    from promptcache.cache_points import get_model_info
    from promptcache.integrations.bedrock import CachePointChatBedrockConverse

    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    model = CachePointChatBedrockConverse(
        model=CLAUDE,
        client=client,
        region_name="us-east-1",
        cache_model_info=get_model_info(CLAUDE, min_tokens_per_cache_point=2),
        token_counter=lambda m: 5,
        **{"strategy": "multi-point", **kwargs},
    )
    return model, Stubber(client)


_BEDROCK_MESSAGES = [SystemMessage("sys"), HumanMessage("a"), AIMessage("b"), HumanMessage("c")]


def _bedrock_call(model, stub, config=None):
    stub.add_response(
        "converse",
        {
            "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
            "stopReason": "end_turn",
            "metrics": {"latencyMs": 1},
            "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        },
    )
    with stub:
        reply = model.invoke(_BEDROCK_MESSAGES, config=config)
    return reply.content, [p.index for p in model.last_plan.placements]


@pytest.mark.parametrize(
    "garbage",
    [
        b"\xff",
        b"null",
        b"{}",
        b'[{"index": 99}]',
        b'[{"index": 1}]',
        b'[{"index": true}]',
        b'[{"index": 0, "fingerprint": 7}]',
        b"[1, 2]",
    ],
)
def test_bedrock_corrupt_placement_entry_in_redis_is_ignored(garbage, redis_cache, redis_client, redis_prefix):
    from promptcache.integrations.bedrock import PlacementStore

    model, stub = _bedrock_model(placement_store=redis_cache)
    placements = redis_cache.namespaced(PlacementStore.NAMESPACE)
    redis_client.set(placements.full_key(PlacementStore.key("thread:t1", CLAUDE_BASE)), garbage)
    assert _bedrock_call(model, stub, {"configurable": {"thread_id": "t1"}}) == ("ok", [2])


@pytest.mark.parametrize("store", ["dead-redis", "raising"])
def test_bedrock_failing_placement_store_never_breaks_the_call(store):
    from promptcache.integrations.redis import RedisCache

    backend = RedisCache(url=DEAD_REDIS) if store == "dead-redis" else RaisingCache()
    model, stub = _bedrock_model(placement_store=backend)
    assert _bedrock_call(model, stub, {"configurable": {"thread_id": "t"}}) == ("ok", [2])


@pytest.mark.parametrize("thread_id", ["a:b", "{x}", "*", "a\nb", "", 0, {"x": 1}, "🙂" * 1000])
def test_bedrock_odd_thread_ids_work(thread_id):
    model, stub = _bedrock_model()
    assert _bedrock_call(model, stub, {"configurable": {"thread_id": thread_id}}) == ("ok", [2])


@pytest.mark.parametrize(
    "kwargs, named",
    [
        (dict(cache_ttl="2h"), "2h"),
        (dict(cache_ttl="1h"), "1h"),
        (dict(placement_ttl_s=NAN), "nan"),
        (dict(placement_ttl_s=0), "0"),
        (dict(placement_store="redis://x"), "str"),
        (dict(cache_points="maybe"), "maybe"),
    ],
)
def test_cache_point_model_rejects_bad_options(kwargs, named):
    with pytest.raises((TypeError, ValueError), match=named):
        _bedrock_model(**kwargs)


def test_bedrock_cache_points_processor_rejects_impossible_ttl_at_construction():
    from promptcache.integrations.bedrock import BedrockCachePoints

    with pytest.raises(ValueError, match="2h"):
        BedrockCachePoints(cache_ttl="2h")


def test_bedrock_cache_points_processor_rejects_non_model_info():
    from promptcache.integrations.bedrock import BedrockCachePoints

    with pytest.raises(TypeError, match="cache_model_info"):
        BedrockCachePoints(cache_model_info=5)


# =================================================================================================================
# Typed memory: TypedMemoryStore, MemoryNode, TypedMemoryMiddleware, make_remember_tool
# =================================================================================================================
@pytest.mark.parametrize(
    "args, kwargs, exc, named",
    [
        (("", "feedback", "r"), {}, ValueError, "''"),
        (("a.b", "feedback", "r"), {}, ValueError, "a.b"),
        (("_unscoped", "feedback", "r"), {}, ValueError, "_unscoped"),
        ((True, "feedback", "r"), {}, TypeError, "True"),
        (("u", "", "r"), {}, ValueError, "''"),
        (("u", None, "r"), {}, ValueError, "None"),
        (("u", "facts", "r"), {}, ValueError, "facts"),
        (("u", "feedback", ""), {}, ValueError, "''"),
        (("u", "feedback", None), {}, TypeError, "None"),
        (("u", "feedback", 5), {}, TypeError, "5"),
        (("u", "project_state", "x"), dict(ttl_s=0), ValueError, "0"),
        (("u", "project_state", "x"), dict(ttl_s=NAN), ValueError, "nan"),
        (("u", "project_state", "x"), dict(ttl_s=INF), ValueError, "inf"),
        (("u", "project_state", "x"), dict(ttl_s=True), TypeError, "True"),
        (("u", "project_state", "x"), dict(ttl_s="10"), TypeError, "10"),
        (("u", "reference", "x"), dict(metadata={"a": 2**70}), TypeError, "64-bit"),
        (("u", "reference", "x"), dict(metadata={1: "a"}), TypeError, "key"),
        (("u", "reference", "x"), dict(metadata={"a": b"x"}), TypeError, "bytes"),
        (("u", "reference", "x"), dict(metadata="str"), TypeError, "str"),
        (("u", "project_state", "x"), dict(subject=" "), ValueError, "' '"),
    ],
)
def test_memory_put_rejects_bad_input_before_writing(args, kwargs, exc, named):
    from promptcache.memory import TypedMemoryStore

    store = InMemoryStore()
    with pytest.raises(exc, match=named):
        TypedMemoryStore(store).put(*args, **kwargs)
    assert store.list_namespaces() == []


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        (dict(prefix="abc"), TypeError),
        (dict(prefix=("a.b",)), ValueError),
        (dict(prefix=("langgraph",)), ValueError),
        (dict(project_state_ttl_s=None), ValueError),
        (dict(project_state_ttl_s=0), ValueError),
        (dict(store=5), TypeError),
    ],
)
def test_memory_store_constructor_rejects_bad_values(kwargs, exc):
    from promptcache.memory import TypedMemoryStore

    with pytest.raises(exc):
        TypedMemoryStore(**({"store": InMemoryStore()} | kwargs))


@pytest.mark.parametrize("limit", [0, -1, 1.5, None])
def test_memory_search_rejects_bad_limits(limit):
    from promptcache.memory import TypedMemoryStore

    with pytest.raises(ValueError, match="limit"):
        TypedMemoryStore().search("u", "user_fact", "x", limit=limit)


def test_memory_search_names_a_non_string_query():
    from promptcache.memory import TypedMemoryStore

    with pytest.raises(TypeError, match="query"):
        TypedMemoryStore().search("u", "user_fact", 5)


def test_memory_scopes_with_separators_and_sql_wildcards_stay_apart_on_postgres(pg_memory):
    scopes = ["a%", "a_c", "abc", "a:b", "{x}", "*", "a\nb", "🙂", "x" * 2000]
    for scope in scopes:
        pg_memory.put(scope, "feedback", f"rule of {scope}")
    assert [[m.content for m in pg_memory.list(s, "feedback")] for s in scopes] == [[f"rule of {s}"] for s in scopes]
    assert pg_memory.search("a%", "feedback", "rule abc") == pg_memory.list("a%", "feedback")


def test_memory_nul_in_content_is_a_clear_error_on_postgres(pg_memory):
    with pytest.raises(ValueError, match="content"):
        pg_memory.put("u", "user_fact", "a\x00b")


def test_memory_huge_ttl_is_a_clear_error_on_postgres(pg_memory):
    with pytest.raises(ValueError, match="ttl_s"):
        pg_memory.put("u", "project_state", "eta tomorrow", ttl_s=1e12)
    assert pg_memory.list("u", "project_state") == []


def test_memory_nan_metadata_is_rejected_before_writing(pg_memory):
    with pytest.raises((TypeError, ValueError), match="metadata"):
        pg_memory.put("u", "reference", "https://example.com", metadata={"a": NAN})


def _memory_with_corrupt_project_state(expires_at):
    from promptcache.memory import TypedMemoryStore

    store = InMemoryStore()
    memory = TypedMemoryStore(store)
    memory.put("u", "project_state", "real state", ttl_s=60)
    store.put(
        memory.namespace("u", "project_state"),
        "bad",
        {"kind": "project_state", "content": "corrupt", "expires_at": expires_at},
    )
    return memory


def test_memory_list_skips_a_corrupt_value():
    memory = _memory_with_corrupt_project_state("garbage")
    assert [m.content for m in memory.list("u", "project_state")] == ["real state"]


def test_memory_forget_expired_skips_a_corrupt_value():
    memory = _memory_with_corrupt_project_state("garbage")
    assert memory.forget_expired("u") == 0
    assert [m.content for m in memory.list("u", "project_state")] == ["real state"]


def test_memory_nan_expiry_is_treated_as_corrupt():
    memory = _memory_with_corrupt_project_state("nan")
    assert [m.content for m in memory.list("u", "project_state")] == ["real state"]


@pytest.mark.parametrize(
    "args, config, answer",
    [
        ({"kind": "bogus", "content": "x"}, {"configurable": {"user_id": "u"}}, "memory not saved: kind"),
        ({"kind": "feedback", "content": ""}, {"configurable": {"user_id": "u"}}, "memory not saved: memory content"),
        (
            {"kind": "feedback", "content": "x", "ttl_s": "nan"},
            {"configurable": {"user_id": "u"}},
            "memory not saved: ttl_s",
        ),
        (
            {"kind": "feedback", "content": "x"},
            {"configurable": {"user_id": "a.b@example.com"}},
            "memory not saved: scope 'a.b@example.com'",
        ),
        ({"kind": "feedback", "content": "x"}, {}, "no user in the call's config"),
        ({"kind": "feedback"}, {"configurable": {"user_id": "u"}}, "memory not saved: content"),
    ],
)
def test_remember_tool_returns_bad_model_input_as_text_and_writes_nothing(args, config, answer):
    from promptcache.memory import TypedMemoryStore, make_remember_tool

    store = InMemoryStore()
    assert make_remember_tool(TypedMemoryStore(store)).invoke(args, config=config).startswith(answer)
    assert store.list_namespaces() == []


def test_remember_tool_ignores_a_user_id_from_the_model():
    from promptcache.memory import TypedMemoryStore, make_remember_tool

    memory = TypedMemoryStore()
    make_remember_tool(memory).invoke(
        {"kind": "feedback", "content": "x", "user_id": "victim"}, config={"configurable": {"user_id": "u"}}
    )
    assert (len(memory.list("u", "feedback")), memory.list("victim", "feedback")) == (1, [])


def test_memory_node_names_an_email_user_id_before_reading():
    from promptcache.integrations.langgraph import MemoryNode

    with pytest.raises(ValueError, match="a.b@example.com"):
        MemoryNode(InMemoryStore()).invoke(
            {"messages": [HumanMessage("hi")]}, {"configurable": {"user_id": "a.b@example.com"}}
        )


def test_memory_node_chat_model_classifier_failure_falls_back_to_rules():
    from promptcache.integrations.langgraph import MemoryNode

    node = MemoryNode(InMemoryStore(), classifier=ScriptedChatModel(error=RuntimeError("classifier down")))
    turn = node.invoke({"messages": [HumanMessage("What is a cache point?")]}, {"configurable": {"user_id": "u"}})[
        "memory_turn"
    ]
    assert turn["conceptual"] is True


def test_memory_node_callable_classifier_failure_falls_back_to_rules():
    from promptcache.integrations.langgraph import MemoryNode

    def classifier(question):
        raise RuntimeError("classifier down")

    turn = MemoryNode(InMemoryStore(), classifier=classifier).invoke(
        {"messages": [HumanMessage("What is a cache point?")]}, {"configurable": {"user_id": "u"}}
    )["memory_turn"]
    assert turn["conceptual"] is True


def test_memory_node_survives_a_corrupt_memory_in_state():
    from promptcache.integrations.langgraph import MemoryNode
    from promptcache.memory import TypedMemoryStore

    memory = TypedMemoryStore()
    memory.put("u", "feedback", "Be brief.")
    state = {
        "messages": [HumanMessage("hi")],
        "memory_scope": "u",
        "memory_version": memory.write_token("u"),
        "memory_feedback": [{"bad": 1}],
    }
    update = MemoryNode(memory).invoke(state, {"configurable": {"user_id": "u"}})
    assert "Be brief." in update["memory_prompt"]


@pytest.mark.parametrize("cls", ["MemoryNode", "TypedMemoryMiddleware"])
def test_memory_processors_reject_empty_scope_at_construction(cls):
    from promptcache.integrations.langgraph import MemoryNode
    from promptcache.memory import TypedMemoryMiddleware

    with pytest.raises(ValueError, match="''"):
        {"MemoryNode": MemoryNode, "TypedMemoryMiddleware": TypedMemoryMiddleware}[cls](InMemoryStore(), scope="")


@pytest.mark.parametrize("kwargs, named", [(dict(classifier=5), "5"), (dict(memory=5), "memory .* got int")])
def test_memory_processors_reject_bad_arguments(kwargs, named):
    from promptcache.integrations.langgraph import MemoryNode
    from promptcache.memory import TypedMemoryMiddleware

    memory = kwargs.pop("memory", InMemoryStore())
    for cls in (MemoryNode, TypedMemoryMiddleware):
        with pytest.raises(TypeError, match=named):
            cls(memory, **kwargs)


# =================================================================================================================
# Intention cache: IntentionMemory, RedisIntentionBackend, make_retrieve_memory_tool, IntentionCache
# =================================================================================================================
@pytest.fixture
def intention_redis(redis_url, redis_prefix):
    from promptcache import IntentionMemory
    from promptcache.integrations.redis_intention import RedisIntentionBackend

    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix)
    yield IntentionMemory(backend)
    backend.close()


@pytest.mark.parametrize(
    "kwargs, exc, named",
    [
        (dict(ttl_s=0), ValueError, "0"),
        (dict(ttl_s=None), ValueError, "None"),
        (dict(ttl_s=NAN), ValueError, "nan"),
        (dict(ttl_s=True), TypeError, "True"),
        (dict(threshold=1.5), ValueError, "1.5"),
        (dict(threshold=NAN), ValueError, "nan"),
        (dict(threshold=True), ValueError, "True"),
        (dict(margin=-0.1), ValueError, "-0.1"),
        (dict(similarity=5), TypeError, "int"),
        (dict(backend=5), TypeError, "int"),
    ],
)
def test_intention_memory_constructor_rejects_bad_values(kwargs, exc, named):
    from promptcache import IntentionMemory

    with pytest.raises(exc, match=named):
        IntentionMemory(**kwargs)


@pytest.mark.parametrize(
    "args, kwargs, exc, named",
    [
        ((None, "q", 1), {}, ValueError, "None"),
        (("", "q", 1), {}, ValueError, "''"),
        ((True, "q", 1), {}, TypeError, "True"),
        (("u", None, 1), {}, TypeError, "None"),
        (("u", "", 1), {}, ValueError, "''"),
        (("u", "???", 1), {}, ValueError, "'\\?\\?\\?'"),
        (("u", "🙂🙂", 1), {}, ValueError, "🙂"),
        (("u", 5, 1), {}, TypeError, "5"),
        (("u", "q", 2**70), {}, TypeError, "result"),
        (("u", "q", object()), {}, TypeError, "result"),
        (("u", "q", b"bytes"), {}, TypeError, "result"),
        (("u", "q", {1: "a"}), {}, TypeError, "result"),
        (("u", "q", 1), dict(tool=""), TypeError, "''"),
        (("u", "q", 1), dict(tool=5), TypeError, "5"),
        (("u", "q", 1), dict(tool="t", args={"a": 2**70}), TypeError, "args"),
    ],
)
def test_intention_store_rejects_bad_input_before_writing(args, kwargs, exc, named):
    from promptcache import IntentionMemory

    memory = IntentionMemory()
    with pytest.raises(exc, match=named):
        memory.store(*args, **kwargs)
    assert memory.backend.index_size("u") == 0


@pytest.mark.parametrize("result", [NAN, {"x": INF}, [1, -INF]], ids=["nan", "inf-in-dict", "-inf-in-list"])
def test_intention_store_rejects_non_finite_numbers(result):
    from promptcache import IntentionMemory

    with pytest.raises((TypeError, ValueError), match="result"):
        IntentionMemory().store("u", "weather in Paris", result)


def test_intention_user_ids_with_separators_stay_apart_on_redis(intention_redis):
    users = ["a:b", "a", "{x}", "x", "*", "a\nb", "🙂", "u" * 5000, 5]
    for i, user in enumerate(users):
        assert intention_redis.store(user, "weather in Paris", {"n": i}) is True
    assert [intention_redis.retrieve(u, "weather in Paris").result for u in users] == [
        {"n": i} for i in range(len(users))
    ]


def test_intention_hash_tag_never_mixes_two_users(intention_redis):
    from promptcache.keys import stable_hash

    victim = "{alice}"
    intention_redis.store(victim, "my bank balance", {"balance": 1000})
    assert intention_redis.retrieve(stable_hash(victim, 16), "my bank balance") is None


@pytest.mark.parametrize("method", ["retrieve", "aretrieve"])
def test_intention_corrupt_result_in_redis_is_a_logged_miss(
    method, intention_redis, redis_client, redis_prefix, caplog
):
    intention_redis.store("alice", "weather in Paris today", {"temp": 21}, tool="get_weather")
    for key in redis_client.scan_iter(match=redis_prefix + "*res:*"):
        redis_client.set(key, b"\xff garbage")
    with caplog.at_level(logging.WARNING):
        if method == "retrieve":
            match = intention_redis.retrieve("alice", "weather in Paris today")
        else:
            match = asyncio.run(intention_redis.aretrieve("alice", "weather in Paris today"))
    assert match is None
    assert len(promptcache_warnings(caplog)) == 1
    # the corrupt value was dropped, so storing the same result again heals the entry
    assert intention_redis.store("alice", "weather in Paris today", {"temp": 21}, tool="get_weather") is True
    assert intention_redis.retrieve("alice", "weather in Paris today").result == {"temp": 21}


@pytest.mark.parametrize(
    "garbage",
    [
        b"{}",
        b"[1]",
        b"\xff",
        b"null",
        (
            b'{"id":"x","intention":null,"normalized":"q","tool":null,"args":null,'
            b'"result_hash":"h","created_at":1,"expires_at":"x","similarity":"lexical"}'
        ),
    ],
)
def test_intention_corrupt_memory_record_in_redis_is_a_miss_then_heals(
    garbage, intention_redis, redis_client, redis_prefix
):
    intention_redis.store("bob", "weather in Rome today", {"temp": 25}, tool="w")
    for key in redis_client.scan_iter(match=redis_prefix + "*:mem:*"):
        redis_client.set(key, garbage)
    assert intention_redis.retrieve("bob", "weather in Rome today") is None
    assert intention_redis.store("bob", "weather in Rome today", {"temp": 25}, tool="w") is True
    assert intention_redis.retrieve("bob", "weather in Rome today").result == {"temp": 25}


def test_intention_one_users_wrongtype_key_does_not_blind_other_users(intention_redis, redis_client, redis_prefix):
    intention_redis.store("carol", "weather in Oslo", {"t": 1})
    intention_redis.store("dave", "weather in Lima", {"t": 2})
    index = intention_redis.backend.index_key("carol")
    redis_client.delete(index)
    redis_client.set(index, "oops")
    assert intention_redis.retrieve("carol", "weather in Oslo") is None
    assert intention_redis.retrieve("dave", "weather in Lima").result == {"t": 2}


def test_intention_huge_ttl_is_rejected_or_works_on_redis(redis_url, redis_prefix):
    from promptcache import IntentionMemory
    from promptcache.integrations.redis_intention import RedisIntentionBackend

    try:
        memory = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix), ttl_s=1e300)
    except ValueError:
        return
    assert memory.store("u", "weather in Paris", {"t": 1}) is True


def test_intention_closed_port_fails_open(caplog):
    from promptcache import IntentionMemory, make_retrieve_memory_tool
    from promptcache.integrations.redis_intention import RedisIntentionBackend
    from promptcache.intention.backends import IntentionBackendError

    memory = IntentionMemory(RedisIntentionBackend(url=DEAD_REDIS))
    with caplog.at_level(logging.WARNING):
        assert memory.store("u", "weather in Paris", 1) is False
        assert memory.retrieve("u", "weather in Paris") is None
        assert asyncio.run(memory.aretrieve("u", "weather in Paris")) is None
    assert len(promptcache_warnings(caplog)) == 1
    tool = make_retrieve_memory_tool(memory)
    assert tool.invoke({"intention": "weather"}, config={"configurable": {"user_id": "u"}}) == "Error retrieving memory"
    with pytest.raises(IntentionBackendError):
        memory.forget("u")  # documented: a deliberate delete must not fail silently


@pytest.mark.parametrize("intention", ["", "   ", "🙂", "???", "x" * 100_000])
def test_retrieve_memory_tool_odd_intentions_are_not_found(intention):
    from promptcache import IntentionMemory, make_retrieve_memory_tool

    memory = IntentionMemory()
    memory.store("u", "weather in Paris", {"t": 1})
    tool = make_retrieve_memory_tool(memory)
    assert tool.invoke({"intention": intention}, config={"configurable": {"user_id": "u"}}) == "Memory not found"


def test_retrieve_memory_tool_without_user_is_not_found():
    from promptcache import IntentionMemory, make_retrieve_memory_tool

    tool = make_retrieve_memory_tool(IntentionMemory())
    assert [tool.invoke({"intention": "q"}, config=c) for c in (None, {})] == ["Memory not found"] * 2


def _tool_request(config, args=None, name="get_weather"):
    return SimpleNamespace(
        tool_call={"name": name, "args": {"city": "Paris"} if args is None else args, "id": "c1"},
        runtime=SimpleNamespace(config=config),
        state={"messages": [HumanMessage("weather Paris?")]},
    )


@pytest.mark.parametrize("user_id", [{"a": 1}, True, "  "])
def test_intention_cache_bad_user_id_is_rejected_before_the_tool_runs(user_id):
    from promptcache import IntentionCache, IntentionMemory

    ran: list[int] = []

    def handler(request):
        ran.append(1)
        return ToolMessage(content='{"t": 1}', tool_call_id="c1", name="get_weather")

    async def ahandler(request):
        return handler(request)

    cache = IntentionCache(IntentionMemory())
    request = _tool_request({"configurable": {"user_id": user_id}})
    with pytest.raises((TypeError, ValueError), match="user_id"):
        cache.wrap_tool_call(request, handler)
    with pytest.raises((TypeError, ValueError), match="user_id"):
        asyncio.run(cache.awrap_tool_call(request, ahandler))
    assert ran == []


def test_intention_cache_unstorable_args_return_the_result_and_log(caplog):
    from promptcache import IntentionCache, IntentionMemory

    memory = IntentionMemory()
    result = ToolMessage(content='{"t": 1}', tool_call_id="c1", name="get_weather")
    with caplog.at_level(logging.WARNING):
        out = IntentionCache(memory).wrap_tool_call(
            _tool_request({"configurable": {"user_id": "u"}}, args={"n": 2**70}), lambda r: result
        )
    assert out is result and memory.backend.index_size("u") == 0
    assert len(promptcache_warnings(caplog)) == 1


@pytest.mark.parametrize("factory", ["IntentionCache", "make_retrieve_memory_tool"])
def test_intention_factories_reject_empty_scope(factory):
    import promptcache
    from promptcache import IntentionMemory

    with pytest.raises(ValueError, match="''"):
        getattr(promptcache, factory)(IntentionMemory(), scope="")


def test_intention_memory_8_threads_x_200_ops():
    from promptcache import IntentionMemory

    memory = IntentionMemory(threshold=1.0)

    def worker(t: int) -> list[bool]:
        ok = []
        for i in range(100):
            user, city = f"user{t}", f"City{i % 20}"
            memory.store(user, f"weather in {city}", {"t": t, "city": city})
            match = memory.retrieve(user, f"weather in {city}")
            ok.append(match is not None and match.result == {"t": t, "city": city})
        return ok

    with ThreadPoolExecutor(8) as pool:
        results = [ok for chunk in pool.map(worker, range(8)) for ok in chunk]
    assert len(results) == 800 and all(results)


# =================================================================================================================
# promptcache replay (CLI)
# =================================================================================================================
def _cli(argv, capsys):
    from promptcache.cli import main

    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.err.strip().splitlines()


@pytest.fixture
def transcript(tmp_path):
    path = tmp_path / "ok.json"
    path.write_text('[{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}]')
    return path


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        (b"", "empty file"),
        (b"\xff\xfe\x00garbage", "invalid JSON"),
        (b"null", "expected conversations"),
        (b'[{"messages":[{"role":"user","content":NaN}]}]', "invalid JSON"),
        (b"[" * 5000 + b"]" * 5000, "invalid JSON"),
    ],
    ids=["missing", "empty", "binary", "null", "nan-literal", "deep"],
)
def test_cli_bad_files_are_one_line_exit_2(content, message, tmp_path, capsys):
    path = tmp_path / "in.json"
    if content is not None:
        path.write_bytes(content)
    code, err = _cli(["replay", str(path), "--no-chart", "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and len(err) == 1
    assert err[0].startswith(f"promptcache: error: {path}:") and message in err[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "option, named",
    [
        (["--gap-s", "nan"], "nan"),
        (["--gap-s", "-1"], "-1"),
        (["--gap-s", "inf"], "inf"),
        (["--model", ""], "''"),
        (["--strategy", "bogus"], "bogus"),
    ],
)
def test_cli_bad_options_are_one_line_exit_2(option, named, transcript, tmp_path, capsys):
    code, err = _cli(["replay", str(transcript), "--no-chart", "--out", str(tmp_path / "out"), *option], capsys)
    assert code == 2 and len(err) == 1 and named in err[0]
    assert not (tmp_path / "out").exists()


def test_cli_out_pointing_at_a_file_is_one_line_exit_2(transcript, tmp_path, capsys):
    target = tmp_path / "afile"
    target.write_text("not a directory")
    code, err = _cli(["replay", str(transcript), "--no-chart", "--out", str(target)], capsys)
    assert code == 2 and len(err) == 1 and str(target) in err[0]
