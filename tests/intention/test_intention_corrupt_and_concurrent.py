"""The intention cache with bad input, corrupt Redis entries, odd tool results, the expiry boundary, threads and async."""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import orjson
import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.types import Command
from support.memory_intention import Clock

from promptcache import IntentionCache, IntentionMemory

DEAD_REDIS = "redis://127.0.0.1:1/0"


@pytest.fixture
def redis_backend(redis_url, redis_prefix):
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix)
    yield backend
    backend.close()


@pytest.fixture(params=["memory", "redis"])
def any_backend(request):
    if request.param == "memory":
        from promptcache import InMemoryIntentionBackend

        return InMemoryIntentionBackend()
    return request.getfixturevalue("redis_backend")


def _fresh_redis_memory(redis_url, prefix, **kwargs):
    """Another process's view of the same Redis data (no local record cache shared)."""
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    return IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=prefix), **kwargs)


@pytest.mark.parametrize("what", ["user", "intention"])
def test_lone_surrogate_user_or_intention_is_rejected_before_writing(what, any_backend):
    """A user id / intention with a lone surrogate: the in-memory backend stores it (True), Redis silently fails
    (``store`` returns False and logs "intention memory store failed": UnicodeEncodeError), which also eats the
    one-a-minute warning a real outage would need. Bad input should raise a ValueError/TypeError naming it."""
    memory = IntentionMemory(any_backend)
    user, intention = ("\ud800u", "weather in Paris") if what == "user" else ("u", "weather \ud800 in Paris")
    with pytest.raises((TypeError, ValueError), match=what):
        memory.store(user, intention, {"t": 1})


@pytest.mark.parametrize(
    "result",
    [datetime.datetime(2020, 1, 1), datetime.date(2020, 1, 1), uuid.UUID(int=1)],
    ids=["datetime", "date", "uuid"],
)
def test_non_json_result_is_rejected(result):
    """The result must be JSON (README; the error lists str, number, bool, None, list, dict). orjson turns a
    datetime/UUID into a string, so today it is stored and comes back as another type ('2020-01-01T00:00:00')."""
    memory = IntentionMemory()
    with pytest.raises(TypeError, match="result"):
        memory.store("u", "when does it start", result)
    assert memory.backend.index_size("u") == 0


@pytest.mark.parametrize(
    "kwargs, named",
    [(dict(tool=5), "5"), (dict(tool=""), "''"), (dict(args=object()), "args")],
    ids=["tool-int", "tool-empty", "args"],
)
def test_retrieve_rejects_what_store_rejects(kwargs, named):
    """``store`` names a bad ``tool``/``args``; ``retrieve`` with the same values silently returns None (a wrong
    type looks like a miss)."""
    memory = IntentionMemory()
    memory.store("u", "weather in Paris", {"t": 1}, tool="get_weather", args={"city": "Paris"})
    with pytest.raises((TypeError, ValueError), match=named):
        memory.retrieve("u", "weather in Paris", **kwargs)


def test_in_memory_backend_does_not_alias_args():
    """The in-memory backend keeps the caller's ``args`` object: mutating it after ``store`` (or mutating a
    returned match's args) rewrites the stored memory, so a later lookup returns {'city': 'London', 'x': 1} for
    a result fetched for Paris and the args filter for Paris misses."""
    memory = IntentionMemory()
    args = {"city": "Paris"}
    memory.store("u", "weather in Paris", {"t": 21}, tool="get_weather", args=args)
    args["city"] = "London"
    memory.retrieve("u", "weather in Paris").args["x"] = 1
    match = memory.retrieve("u", "weather in Paris", args={"city": "Paris"})
    assert match is not None and match.args == {"city": "Paris"}


@pytest.mark.parametrize(
    "field, bad",
    [("expires_at", "soon"), ("expires_at", None), ("intention", None)],
    ids=["expires_at-str", "expires_at-null", "intention-null"],
)
def test_corrupt_record_fields_do_not_blind_the_users_other_memories(field, bad, redis_url, redis_prefix, redis_client):
    """One memory record that is valid JSON with a wrong-typed field (planted in Redis): it is parsed without a
    type check and kept in the index, and every later lookup of that user fails ("intention memory lookup
    failed; treating as a miss: TypeError: '>' not supported between instances of 'str' and 'float'" /
    "normalize() argument 2 must be str, not None"), until it expires. Only that record should be a miss."""
    memory = _fresh_redis_memory(redis_url, redis_prefix)
    memory.store("u", "what is the weather in Paris today", {"t": 21}, tool="get_weather", args={"city": "Paris"})
    memory.store("u", "show my account balance", {"b": 1}, tool="get_balance")
    balance = [r for r in memory.backend.records("u", time.time()) if r.tool == "get_balance"][0]
    key = memory.backend.memory_key("u", balance.id)
    value = orjson.loads(redis_client.get(key))
    value[field] = bad
    redis_client.set(key, orjson.dumps(value), keepttl=True)

    reader = _fresh_redis_memory(redis_url, redis_prefix)
    for _ in range(2):  # the second lookup reuses the records parsed by the first
        exact = reader.retrieve("u", "what is the weather in Paris today")
        assert exact is not None and exact.result == {"t": 21}
        similar = reader.retrieve("u", "what's the weather in Paris today please")
        assert similar is not None and similar.result == {"t": 21}


def test_corrupt_version_counter_does_not_hide_new_memories(redis_url, redis_prefix, redis_client):
    """The user's ``ver`` key overwritten with a non-integer: every ``store`` then returns False ("INCRBY ...
    value is not an integer") although the memory IS written, and this process keeps serving its cached record
    list (the version never moves), so it never sees the new memory while another process does."""
    memory = _fresh_redis_memory(redis_url, redis_prefix)
    memory.store("u", "weather in Paris", 1)
    assert memory.retrieve("u", "weather in Paris").result == 1
    redis_client.set(memory.backend.version_key("u"), "not a number")
    assert memory.retrieve("u", "weather in Paris").result == 1
    memory.store("u", "weather in Rome", 2)
    assert _fresh_redis_memory(redis_url, redis_prefix).retrieve("u", "weather in Rome") is not None
    match = memory.retrieve("u", "weather in Rome")
    assert match is not None and match.result == 2


def _request(user="u", name="get_weather", args=None, human="What is the weather in Paris?"):
    return SimpleNamespace(
        tool_call={"name": name, "args": {"city": "Paris"} if args is None else args, "id": "call-1"},
        runtime=SimpleNamespace(config={"configurable": {"user_id": user}}),
        state={"messages": [HumanMessage(human)]},
    )


@pytest.mark.parametrize(
    "name", ["sendEmail", "deleteFile", "BookFlight", "cancelOrder", "send-email", "transferFunds"]
)
def test_camel_and_kebab_case_side_effect_tools_are_not_stored(name):
    """Side-effecting tools are never stored (so never served back). The deny list matches ``send_`` etc. on the
    lower-cased name, so the common camelCase / kebab-case spellings (``sendEmail``, ``BookFlight``,
    ``send-email``) are stored today, and with ``serve_repeats=True`` a repeated booking is answered from memory
    without booking."""
    memory = IntentionMemory()
    cache = IntentionCache(memory, serve_repeats=True)
    assert cache.should_store(name) is False
    ran: list[int] = []

    def handler(request):
        ran.append(1)
        return ToolMessage(content="done", tool_call_id="call-1", name=name)

    for _ in range(2):
        cache.wrap_tool_call(_request(name=name, args={"to": "bob"}), handler)
    assert ran == [1, 1]
    assert memory.backend.index_size("u") == 0


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(
    "result",
    [
        Command(update={"messages": [ToolMessage(content="x", tool_call_id="call-1")]}),
        ToolMessage(content="Error: boom", tool_call_id="call-1", name="get_weather", status="error"),
    ],
    ids=["command", "error-tool-message"],
)
def test_command_and_error_results_pass_through_unchanged_and_are_not_stored(result, aio):
    memory = IntentionMemory()
    cache = IntentionCache(memory, serve_repeats=True)

    async def ahandler(request):
        return result

    for _ in range(2):
        if aio:
            out = asyncio.run(cache.awrap_tool_call(_request(), ahandler))
        else:
            out = cache.wrap_tool_call(_request(), lambda r: result)
        assert out is result
    assert memory.backend.index_size("u") == 0


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_a_raising_tool_propagates_and_nothing_is_stored(aio):
    memory = IntentionMemory()
    cache = IntentionCache(memory, serve_repeats=True)

    def handler(request):
        raise RuntimeError("weather service down")

    async def ahandler(request):
        handler(request)

    for _ in range(2):
        with pytest.raises(RuntimeError, match="weather service down"):
            if aio:
                asyncio.run(cache.awrap_tool_call(_request(), ahandler))
            else:
                cache.wrap_tool_call(_request(), handler)
    assert memory.backend.index_size("u") == 0


def test_dead_redis_during_store_and_serve_never_breaks_the_tool_call(caplog):
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    memory = IntentionMemory(RedisIntentionBackend(url=DEAD_REDIS))
    cache = IntentionCache(memory, serve_repeats=True)
    reply = ToolMessage(content='{"t": 21}', tool_call_id="call-1", name="get_weather")

    async def ahandler(request):
        return reply

    with caplog.at_level(logging.WARNING):
        assert cache.wrap_tool_call(_request(), lambda r: reply) is reply
        assert asyncio.run(cache.awrap_tool_call(_request(), ahandler)) is reply
        assert asyncio.run(memory.astore("u", "weather in Paris", 1)) is False
    assert len([r for r in caplog.records if r.name.startswith("promptcache") and r.levelno >= logging.WARNING]) == 1


def test_serve_repeats_never_serves_another_users_result_on_redis(redis_backend):
    memory = IntentionMemory(redis_backend)
    cache = IntentionCache(memory, serve_repeats=True, serve_similar=True)
    alice = ToolMessage(content="alice's balance: 1000", tool_call_id="call-1", name="get_balance")
    bob = ToolMessage(content="bob's balance: 5", tool_call_id="call-1", name="get_balance")
    cache.wrap_tool_call(_request("alice", "get_balance", {}, "What is my balance?"), lambda r: alice)
    assert cache.wrap_tool_call(_request("bob", "get_balance", {}, "What is my balance?"), lambda r: bob) is bob
    served = cache.wrap_tool_call(_request("alice", "get_balance", {}, "What is my balance?"), lambda r: 1 / 0)
    assert served.content == "alice's balance: 1000"
    assert memory.retrieve("carol", "What is my balance?") is None


def test_very_long_intention_through_the_middleware(any_backend):
    memory = IntentionMemory(any_backend)
    cache = IntentionCache(memory, serve_repeats=True)
    question = "What is the weather in Paris " + "and also tell me more " * 20_000
    reply = ToolMessage(content='{"t": 21}', tool_call_id="call-1", name="get_weather")
    assert cache.wrap_tool_call(_request(human=question), lambda r: reply) is reply
    served = cache.wrap_tool_call(_request(human=question), lambda r: 1 / 0)
    assert served.content == '{"t": 21}'


def test_intention_expiry_boundary(any_backend):
    clock = Clock()
    memory = IntentionMemory(any_backend, ttl_s=60, clock=clock)
    memory.store("u", "weather in Paris", {"t": 1})
    clock.now += 59.999
    assert memory.retrieve("u", "weather in Paris").result == {"t": 1}
    assert memory.retrieve("u", "weather in Paris").result == {"t": 1}  # served from a cached record list too
    clock.now += 0.001
    assert memory.retrieve("u", "weather in Paris") is None
    assert memory.retrieve_all("u", "weather in Paris") == []


def test_redis_threads_store_and_retrieve_one_user(redis_url, redis_prefix):
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=2)
    memory = IntentionMemory(backend, threshold=1.0)

    def worker(t: int) -> list[bool]:
        ok = []
        for i in range(40):
            city = f"City{t}x{i % 10}"
            stored = memory.store("shared", f"weather in {city}", {"t": t, "c": city})
            match = memory.retrieve("shared", f"weather in {city}")
            ok.append(stored and match is not None and match.result == {"t": t, "c": city})
        return ok

    try:
        with ThreadPoolExecutor(8) as pool:
            results = [ok for chunk in pool.map(worker, range(8)) for ok in chunk]
        assert len(results) == 320 and all(results)
    finally:
        backend.close()


async def test_redis_async_gather_store_and_retrieve_one_user(redis_url, redis_prefix):
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=2)
    memory = IntentionMemory(backend, threshold=1.0)

    async def worker(t: int) -> list[bool]:
        ok = []
        for i in range(20):
            city = f"Town{t}x{i % 5}"
            stored = await memory.astore("shared", f"weather in {city}", {"t": t, "c": city})
            match = await memory.aretrieve("shared", f"weather in {city}")
            ok.append(stored and match is not None and match.result == {"t": t, "c": city})
        return ok

    try:
        results = [ok for chunk in await asyncio.gather(*(worker(t) for t in range(8))) for ok in chunk]
        assert len(results) == 160 and all(results)
        sync = memory.retrieve_all("shared", "weather in Town3x4")
        assert [m.result for m in await memory.aretrieve_all("shared", "weather in Town3x4")] == [
            m.result for m in sync
        ]
    finally:
        await backend.aclose() if hasattr(backend, "aclose") else backend.close()
