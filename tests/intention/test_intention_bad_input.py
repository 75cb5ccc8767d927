"""The intention cache (memory, Redis backend, retrieve_memory, IntentionCache) with bad input and failing backends."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from support.hardening import DEAD_REDIS, INF, NAN, promptcache_warnings


@pytest.fixture
def intention_redis(redis_url, redis_prefix):
    from promptcache import IntentionMemory
    from promptcache.integrations._redis_intention import RedisIntentionBackend

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
        (("u", "q", 1), dict(tool=""), ValueError, "''"),
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
    users = [
        "a:b",
        "a",
        "{x}",
        "x",
        "*",
        "a\nb",
        "🙂",
        "u" * 5000,
        "5",
    ]  # an int id is refused (tests/api/test_scope_ids_are_strings.py)
    for i, user in enumerate(users):
        assert intention_redis.store(user, "weather in Paris", {"n": i}) is True
    assert [intention_redis.retrieve(u, "weather in Paris").result for u in users] == [
        {"n": i} for i in range(len(users))
    ]


def test_intention_hash_tag_never_mixes_two_users(intention_redis):
    from promptcache._keys import stable_hash

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
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    try:
        memory = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix), ttl_s=1e300)
    except ValueError:
        return
    assert memory.store("u", "weather in Paris", {"t": 1}) is True


def test_intention_closed_port_fails_open(caplog):
    from promptcache import IntentionMemory, make_retrieve_memory_tool
    from promptcache.integrations._redis_intention import RedisIntentionBackend
    from promptcache.intention._backends import IntentionBackendError

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
