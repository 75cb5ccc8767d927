"""ResponseCache, context/apply_context and with_processors with bad input: clear errors naming the value."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from concurrent.futures import ThreadPoolExecutor

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from support.hardening import DEAD_REDIS, NAN, RaisingCache, promptcache_warnings

from promptcache import ResponseCache, with_processors
from promptcache.backends import InMemoryServerCache
from promptcache.testing import ScriptedChatModel


class EchoModel(ScriptedChatModel):
    """Answers ``echo:<last message text>`` (so concurrent callers can check they got their own reply)."""

    def _next(self, messages):
        with self._lock:
            self.calls += 1
        return AIMessage(
            content=f"echo:{messages[-1].content}",
            usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
        )


@pytest.mark.parametrize(
    "kwargs, exc, named",
    [
        (dict(ttl_s=NAN), ValueError, "nan"),
        (dict(ttl_s=-1), ValueError, "-1"),
        (dict(ttl_s=True), TypeError, "True"),
        (dict(ttl_s="300"), TypeError, "300"),
        (dict(ttl_s=None), TypeError, "None"),
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
