"""Attack: typed memory and the intention cache with bad input, corrupt stored entries, dead backends, threads.

Every test asserts the CORRECT behaviour (the project's rules):
- bad input: a clear ``TypeError``/``ValueError`` naming the bad value, raised before anything is written;
- a failing or corrupt backend: a miss (or a skipped write), logged once, never an exception in the user's call,
  and never a reason to lose or hide other, healthy memories;
- project state expires (``expires_at`` enforced on every read); errors and side-effecting tools are never stored.

Tests for findings fail today; tests marked ``# passes`` cover something the other test files do not.
Real Redis and PostgreSQL (fixtures in conftest.py), each test under its own key prefix / namespace prefix.
"""

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
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from promptcache import IntentionCache, IntentionMemory
from promptcache.integrations.langgraph import MemoryNode
from promptcache.memory import TypedMemoryStore, make_reference_tool

DEAD_REDIS = "redis://127.0.0.1:1/0"
USER = {"configurable": {"user_id": "u"}}


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


# =================================================================================================================
# fixtures
# =================================================================================================================
@pytest.fixture
def redis_backend(redis_url, redis_prefix):
    from promptcache.integrations.redis_intention import RedisIntentionBackend

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
    from promptcache.integrations.redis_intention import RedisIntentionBackend

    return IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=prefix), **kwargs)


def _planted(kind_ns: str, value: dict, scope: str = "u") -> TypedMemoryStore:
    store = InMemoryStore()
    memory = TypedMemoryStore(store)
    store.put(memory.namespace(scope, kind_ns), "planted", value)
    return memory


# =================================================================================================================
# Typed memory: corrupt values planted in the store, read through the public API
# =================================================================================================================
@pytest.mark.parametrize(
    "value",
    [
        {"kind": "project_state", "content": "Deploy is running"},  # expires_at missing
        {"kind": "project_state", "content": "Deploy is running", "expires_at": None},  # expires_at null
        {"kind": "user_fact", "content": "Deploy is running"},  # wrong kind for the namespace
    ],
    ids=["missing-expires_at", "null-expires_at", "kind-mismatch"],
)
def test_project_state_value_that_can_never_expire_is_not_shown(value):
    """project_state must expire: a value in the project_state namespace without an expiry (or claiming another
    kind, hence no expiry) is a corrupt entry. Today it is returned as live project state forever."""
    memory = _planted("project_state", value)
    memory.put("u", "project_state", "Build 7 is green", ttl_s=60)
    live = memory.list("u", "project_state")
    assert [m.content for m in live] == ["Build 7 is green"]
    assert all(m.expires_at is not None and m.kind.value == "project_state" for m in live)


def test_stored_value_with_null_content_is_skipped_not_rendered_as_the_text_none():
    """A value with ``"content": null`` is corrupt; today it is read as the memory text "None" and lands in the
    system prompt as a rule."""
    memory = _planted("feedback", {"kind": "feedback", "content": None})
    memory.put("u", "feedback", "Be brief.")
    assert [m.content for m in memory.list("u", "feedback")] == ["Be brief."]
    update = MemoryNode(memory).invoke({"messages": [HumanMessage("hi")]}, USER)
    assert "None" not in update["memory_prompt"].splitlines()


def test_corrupt_subject_does_not_break_search():
    """A value whose subject is not a string: today ``search`` raises
    ``TypeError: can only concatenate str (not "int") to str`` instead of skipping the corrupt entry."""
    memory = _planted("user_fact", {"kind": "user_fact", "content": "Drinks tea", "subject": 5})
    memory.put("u", "user_fact", "Likes green tea")
    assert "Likes green tea" in [m.content for m in memory.search("u", "user_fact", "tea")]


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_corrupt_subject_does_not_break_read_reference_tool(aio):
    """read_reference over a scope holding one corrupt reference (subject 5): today the tool raises
    ``TypeError: normalize() argument 2 must be str, not int`` out of the agent's tool call (not a ToolException,
    so handle_tool_error does not catch it). The healthy reference must still be found."""
    memory = _planted("reference", {"kind": "reference", "content": "http://junk", "subject": 5})
    memory.put("u", "reference", "https://wiki.example.com/runbook", subject="runbook")
    tool = make_reference_tool(memory)
    if aio:
        answer = asyncio.run(tool.ainvoke({"ref_id": "runbook"}, config=USER))
    else:
        answer = tool.invoke({"ref_id": "runbook"}, config=USER)
    assert answer == "https://wiki.example.com/runbook"


def test_a_listed_memory_can_be_deleted_by_its_id():
    """A stored value whose ``id`` differs from its store key: ``list`` reports the value's id, ``delete``/``get``
    by that id miss, so the memory can never be removed through the API."""
    memory = _planted("feedback", {"id": "not-the-key", "kind": "feedback", "content": "Old rule"})
    listed = memory.list("u", "feedback")
    assert len(listed) == 1
    assert memory.get("u", "feedback", listed[0].id) is not None
    memory.delete("u", "feedback", listed[0].id)
    assert memory.list("u", "feedback") == []


def test_items_in_a_child_namespace_do_not_duplicate_memories():
    """``_scan`` pages with ``offset=len(items)`` but drops items of child namespaces (a prefix search returns
    them), so the offset falls behind: 30 foreign items under ``(*ns, "child")`` + 150 memories list 180
    memories (30 duplicates). With >= 100 foreign items ``list`` never returns (infinite loop)."""
    store = InMemoryStore()
    memory = TypedMemoryStore(store)
    ns = memory.namespace("u", "feedback")
    for i in range(30):
        store.put((*ns, "child"), f"k{i}", {"x": i})
    for i in range(150):
        memory.put("u", "feedback", f"rule {i}")
    listed = memory.list("u", "feedback")
    assert len(listed) == len({m.id for m in listed}) == 150


# =================================================================================================================
# Typed memory: bad input
# =================================================================================================================
def test_forget_expired_with_a_single_kind_string():
    """``forget_expired("u", "project_state")``: today the string is iterated letter by letter and the error
    names ``'p'`` (``unknown memory kind 'p'``). A single kind should work (or the error name the argument)."""
    clock = Clock()
    memory = TypedMemoryStore(clock=clock)
    memory.put("u", "project_state", "ETA 3 pm", ttl_s=60)
    clock.now += 61
    try:
        deleted = memory.forget_expired("u", "project_state")
    except (TypeError, ValueError) as exc:
        assert "'project_state'" in str(exc)  # the argument as given, not one of its letters
    else:
        assert deleted == 1


def test_lone_surrogate_in_content_is_named():
    """Content with a lone surrogate (not encodable as UTF-8, so no store can keep it): today a bare
    ``UnicodeEncodeError: 'utf-8' codec can't encode character '\\ud800'`` that does not say which argument."""
    store = InMemoryStore()
    with pytest.raises(ValueError, match="content"):
        TypedMemoryStore(store).put("u", "project_state", "ETA \ud800 3 pm", subject="eta")
    assert store.list_namespaces() == []


def test_lone_surrogate_in_scope_is_named_on_postgres(pg_memory):
    """InMemoryStore accepts a scope with a lone surrogate; PostgresStore fails inside psycopg with
    ``UnicodeEncodeError`` that does not name the scope. It should be a ValueError naming the scope, on every
    store, before anything is read or written."""
    with pytest.raises(ValueError, match="scope"):
        pg_memory.put("\ud800", "feedback", "Be brief.")


@pytest.mark.parametrize("backend", ["memory", "postgres"])
def test_non_json_metadata_is_rejected_naming_metadata(backend, request):
    """metadata={"since": datetime}: InMemoryStore accepts and keeps a datetime (not JSON); PostgresStore raises
    ``TypeError: Object of type datetime is not JSON serializable`` from inside the store. Both should raise
    the documented "metadata must be JSON-serialisable" before writing."""
    memory = TypedMemoryStore() if backend == "memory" else request.getfixturevalue("pg_memory")
    with pytest.raises(TypeError, match="metadata"):
        memory.put("u", "reference", "https://example.com", metadata={"since": datetime.datetime(2020, 1, 1)})
    assert memory.list("u", "reference") == []


def test_get_and_delete_with_a_nul_id_on_postgres(pg_memory):
    """An id with NUL cannot exist (put refuses NUL). Today ``get``/``delete`` raise psycopg's ``DataError:
    PostgreSQL text fields cannot contain NUL (0x00) bytes``; ``get`` should be a miss and ``delete`` a no-op
    (documented: no error when it does not exist), or a ValueError naming the id."""
    pg_memory.put("u", "feedback", "Be brief.")
    try:
        assert pg_memory.get("u", "feedback", "a\x00b") is None
        pg_memory.delete("u", "feedback", "a\x00b")
    except ValueError as exc:
        assert "a\\x00b" in str(exc)
    assert [m.content for m in pg_memory.list("u", "feedback")] == ["Be brief."]


# =================================================================================================================
# Typed memory: nothing is lost, expiry enforced on every read
# =================================================================================================================
def test_same_content_under_two_subjects_keeps_both():
    """Two different subjects (order 42, order 43) that happen to have the same text: writing the second deletes
    the first (the content-duplicate rule wins over the subject). Nothing may be lost: order 42's state must
    stay."""
    memory = TypedMemoryStore()
    memory.put("u", "project_state", "Arrives at 17:00", subject="eta order 42")
    memory.put("u", "project_state", "Arrives at 17:00", subject="eta order 43")
    assert sorted(m.subject for m in memory.list("u", "project_state")) == ["eta order 42", "eta order 43"]


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_expired_thread_memories_kept_in_state_are_not_rendered(aio):
    """A feedback rule / user fact written with ttl_s=60 is loaded into the thread state on turn 1; on a later
    turn of the same thread (after expiry) MemoryNode renders it again from state without checking
    ``expires_at``: today turn 2's prompt still holds both expired memories."""
    clock = Clock()
    memory = TypedMemoryStore(InMemoryStore(), clock=clock)
    memory.put("u", "feedback", "Temporary rule: answer in French.", ttl_s=60)
    memory.put("u", "user_fact", "On vacation this week.", ttl_s=60)
    node = MemoryNode(memory)
    state = {"messages": [HumanMessage("hi")]}
    first = asyncio.run(node.ainvoke(state, USER)) if aio else node.invoke(state, USER)
    assert "answer in French" in first["memory_prompt"]
    clock.now += 120
    state = {**state, **first, "messages": [HumanMessage("hi"), HumanMessage("Status of order 42?")]}
    second = asyncio.run(node.ainvoke(state, USER)) if aio else node.invoke(state, USER)
    assert "answer in French" not in second["memory_prompt"]
    assert "On vacation" not in second["memory_prompt"]


def test_nested_metadata_is_not_shared_with_the_caller():
    """Mutating the caller's metadata after ``put`` (or a returned memory's metadata) changes the stored memory:
    today the nested list is shared with the store."""
    memory = TypedMemoryStore()
    metadata = {"description": "runbook", "tags": ["ops"]}
    memory.put("u", "reference", "https://wiki.example.com/runbook", metadata=metadata)
    metadata["tags"].append("INJECTED")
    memory.list("u", "reference")[0].metadata["tags"].append("INJECTED-2")
    assert memory.list("u", "reference")[0].metadata == {"description": "runbook", "tags": ["ops"]}


def test_default_store_survives_threads_storing_and_reading_one_user():
    """``TypedMemoryStore()`` (default InMemoryStore) from 8 threads putting and listing one user's memories:
    today ``RuntimeError: dictionary changed size during iteration`` (raised in InMemoryStore._filter_items
    during ``_scan``) breaks the user's call."""
    memory = TypedMemoryStore()
    errors: list[str] = []

    def worker(t: int) -> None:
        for i in range(60):
            try:
                memory.put("u", "user_fact", f"fact {t} {i}")
                memory.list("u", "user_fact")
            except Exception as exc:  # noqa: BLE001
                errors.append(repr(exc))
                return

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(worker, range(8)))
    assert errors == []
    assert len(memory.list("u", "user_fact")) == 480


# passes
@pytest.mark.parametrize("where", ["memory", "postgres"])
def test_project_state_expiry_boundary(where, request):
    clock = Clock()
    store = InMemoryStore() if where == "memory" else request.getfixturevalue("pg_store")
    memory = TypedMemoryStore(store, prefix=("pcattack", uuid.uuid4().hex[:12]), clock=clock)
    m = memory.put("u", "project_state", "ETA 3 pm", ttl_s=60)
    try:
        clock.now = m.expires_at - 0.001
        assert [x.content for x in memory.list("u", "project_state")] == ["ETA 3 pm"]
        assert memory.get("u", "project_state", m.id) is not None
        clock.now = m.expires_at
        assert memory.list("u", "project_state") == []
        assert memory.get("u", "project_state", m.id) is None
        assert memory.search("u", "project_state", "ETA") == []
    finally:
        memory.delete("u", "project_state", m.id)


# =================================================================================================================
# Intention cache: bad input
# =================================================================================================================
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


# =================================================================================================================
# Intention cache: corrupt Redis entries
# =================================================================================================================
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


# =================================================================================================================
# Intention cache: IntentionCache middleware
# =================================================================================================================
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


# passes
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


# passes
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


# passes
def test_dead_redis_during_store_and_serve_never_breaks_the_tool_call(caplog):
    from promptcache.integrations.redis_intention import RedisIntentionBackend

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


# passes
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


# passes
def test_very_long_intention_through_the_middleware(any_backend):
    memory = IntentionMemory(any_backend)
    cache = IntentionCache(memory, serve_repeats=True)
    question = "What is the weather in Paris " + "and also tell me more " * 20_000
    reply = ToolMessage(content='{"t": 21}', tool_call_id="call-1", name="get_weather")
    assert cache.wrap_tool_call(_request(human=question), lambda r: reply) is reply
    served = cache.wrap_tool_call(_request(human=question), lambda r: 1 / 0)
    assert served.content == '{"t": 21}'


# =================================================================================================================
# Intention cache: expiry boundary, threads, async
# =================================================================================================================
# passes
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


# passes
def test_redis_threads_store_and_retrieve_one_user(redis_url, redis_prefix):
    from promptcache.integrations.redis_intention import RedisIntentionBackend

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


# passes
async def test_redis_async_gather_store_and_retrieve_one_user(redis_url, redis_prefix):
    from promptcache.integrations.redis_intention import RedisIntentionBackend

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
