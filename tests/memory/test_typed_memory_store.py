"""TypedMemoryStore on InMemoryStore and on a real PostgresStore: kinds, expiry, duplicates, subjects, scopes."""

from __future__ import annotations

import time
import uuid

import pytest
from langgraph.store.memory import InMemoryStore
from support.memory import CountingStore, purge_prefix

from promptcache.memory import MemoryKind, TypedMemory, TypedMemoryStore


@pytest.fixture(params=["memory", "postgres"])
def memory(request):
    """A TypedMemoryStore with a unique prefix on each backend; the prefix is purged afterwards."""
    prefix = ("pctest", uuid.uuid4().hex[:12])
    if request.param == "memory":
        yield TypedMemoryStore(InMemoryStore(), prefix=prefix)
        return
    store = request.getfixturevalue("pg_store")
    yield TypedMemoryStore(store, prefix=prefix)
    purge_prefix(store, prefix)


def test_namespace_is_prefix_scope_kind(memory):
    assert memory.namespace("u1", "feedback") == (*memory.prefix, "u1", "feedback")
    assert memory.namespace(None, MemoryKind.REFERENCE) == (*memory.prefix, "_unscoped", "reference")


def test_kinds_are_kept_apart(memory):
    memory.put("u1", "user_fact", "Prefers Python")
    memory.put("u1", "feedback", "No jokes in compliance answers")
    memory.put("u1", MemoryKind.REFERENCE, "https://wiki.example/runbook", metadata={"description": "runbook"})
    assert [m.content for m in memory.list("u1", "user_fact")] == ["Prefers Python"]
    assert [m.content for m in memory.list("u1", "feedback")] == ["No jokes in compliance answers"]
    ref = memory.list("u1", "reference")
    assert [(m.kind, m.content, m.description) for m in ref] == [
        (MemoryKind.REFERENCE, "https://wiki.example/runbook", "runbook")
    ]
    assert memory.list("u1", "project_state") == []
    assert memory.get("u1", "user_fact", ref[0].id) is None  # same id, other kind: not visible


def test_scopes_never_see_each_other(memory):
    memory.put("alice", "user_fact", "Lives in Seattle")
    memory.put("bob", "user_fact", "Lives in Oslo")
    memory.put(None, "user_fact", "Shared fact")
    assert [m.content for m in memory.list("alice", "user_fact")] == ["Lives in Seattle"]
    assert [m.content for m in memory.list("bob", "user_fact")] == ["Lives in Oslo"]
    assert [m.content for m in memory.list(None, "user_fact")] == ["Shared fact"]
    alice = memory.list("alice", "user_fact")[0]
    assert memory.get("bob", "user_fact", alice.id) is None
    assert memory.search("bob", "user_fact", "Seattle") == []


def test_duplicates_collapse_after_normalising(memory):
    a = memory.put("u1", "feedback", "Never reveal the DB password.")
    b = memory.put("u1", "feedback", "  never   REVEAL the db\npassword. ")
    assert a.id == b.id
    assert [m.content for m in memory.list("u1", "feedback")] == ["never   REVEAL the db\npassword."]


def test_duplicate_of_a_subjected_memory_keeps_its_subject(memory):
    first = memory.put("u1", "user_fact", "Works as a designer", subject="job")
    again = memory.put("u1", "user_fact", "works as a DESIGNER")
    assert again.id == first.id and again.subject == "job"
    assert len(memory.list("u1", "user_fact")) == 1
    # a subjected write takes over an unsubjected duplicate
    memory.put("u1", "user_fact", "Likes tea")
    memory.put("u1", "user_fact", "likes tea", subject="drink")
    assert sorted((m.content, m.subject) for m in memory.list("u1", "user_fact")) == [
        ("likes tea", "drink"),
        ("works as a DESIGNER", "job"),
    ]


def test_newer_memory_with_same_subject_replaces(memory):
    memory.put("u1", "project_state", "ETA for order 42 is 3 pm", subject="ETA order 42")
    memory.put("u1", "project_state", "ETA for order 43 is 4 pm", subject="ETA order 43")
    memory.put("u1", "project_state", "ETA for order 42 is 5 pm", subject="eta  ORDER 42")
    assert sorted(m.content for m in memory.list("u1", "project_state")) == [
        "ETA for order 42 is 5 pm",
        "ETA for order 43 is 4 pm",
    ]


def test_project_state_expires_on_every_read(memory):
    kept = memory.put("u1", "project_state", "Build 7 is green", ttl_s=60)
    gone = memory.put("u1", "project_state", "Deploy is running", ttl_s=0.3)
    fact = memory.put("u1", "user_fact", "Is on call this week")
    assert gone.expires_at == pytest.approx(gone.created_at + 0.3)
    assert fact.expires_at is None
    assert len(memory.list("u1", "project_state")) == 2
    time.sleep(0.45)
    assert [m.content for m in memory.list("u1", "project_state")] == ["Build 7 is green"]
    assert memory.get("u1", "project_state", gone.id) is None
    assert memory.get("u1", "project_state", kept.id).content == "Build 7 is green"
    assert memory.search("u1", "project_state", "deploy running") == []
    assert memory.forget_expired("u1") == 1
    assert memory.forget_expired("u1") == 0
    assert [m.content for m in memory.list("u1", "user_fact")] == ["Is on call this week"]


def test_default_project_state_window_is_configurable():
    memory = TypedMemoryStore(InMemoryStore(), project_state_ttl_s=0.2)
    m = memory.put("u1", "project_state", "Task 3 at 50%")
    assert m.expires_at - m.created_at == pytest.approx(0.2)
    time.sleep(0.3)
    assert memory.list("u1", "project_state") == []


def test_search_ranks_by_shared_words(memory):
    memory.put("u1", "reference", "https://ci.example/pipelines", metadata={"description": "CI pipeline dashboard"})
    memory.put("u1", "reference", "doc-1234 payment runbook")
    memory.put("u1", "reference", "https://grafana.example/payments", metadata={"description": "payments"})
    assert [m.content for m in memory.search("u1", "reference", "payment runbook")] == ["doc-1234 payment runbook"]
    assert len(memory.search("u1", "reference", limit=2)) == 2
    with pytest.raises(ValueError, match="limit"):
        memory.search("u1", "reference", "x", limit=0)


def test_delete(memory):
    m = memory.put("u1", "user_fact", "Has a dog")
    memory.delete("u1", "user_fact", m.id)
    assert memory.list("u1", "user_fact") == []


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"kind": "opinion"}, ValueError, "unknown memory kind 'opinion'"),
        ({"content": "   "}, ValueError, "content must not be empty"),
        ({"content": 5}, TypeError, "content must be a string"),
        ({"ttl_s": -1}, ValueError, "ttl_s must be a finite number of seconds > 0 .*got -1"),
        ({"ttl_s": 0}, ValueError, "ttl_s must be"),
        ({"scope": "a.b"}, ValueError, "scope 'a.b' contains the namespace separator"),
        ({"scope": ""}, ValueError, "scope must be a non-empty string"),
        ({"scope": "_unscoped"}, ValueError, "reserved"),
        ({"subject": " "}, ValueError, "subject must be None or a non-empty string"),
        ({"metadata": {"x": object()}}, TypeError, "JSON-serialisable"),
        ({"ttl_s": 315_360_001}, ValueError, "ttl_s must be at most 315360000 seconds"),
        ({"content": "a\x00b"}, ValueError, "memory content must not contain a NUL"),
        ({"subject": "s\x00"}, ValueError, "memory subject must not contain a NUL"),
        ({"scope": "u\x00"}, ValueError, r"scope 'u\\x00' contains a NUL"),
        ({"metadata": {"a": [1, {"b": float("inf")}]}}, ValueError, r"metadata\['a'\]\[1\]\['b'\] is inf"),
        ({"metadata": {"a": float("nan")}}, ValueError, r"metadata\['a'\] is nan"),
        ({"metadata": {"d": "x\x00"}}, ValueError, r"metadata\['d'\] must not contain a NUL"),
        ({"metadata": {"k\x00": 1}}, ValueError, "a key of metadata must not contain a NUL"),
    ],
)
def test_bad_input_raises_and_writes_nothing(kwargs, error, match):
    raw = CountingStore()
    memory = TypedMemoryStore(raw)
    args = {"scope": "u1", "kind": "project_state", "content": "ETA 3 pm", **kwargs}
    scope, kind, content = args.pop("scope"), args.pop("kind"), args.pop("content")
    with pytest.raises(error, match=match):
        memory.put(scope, kind, content, **args)
    assert raw.writes() == 0 and raw.reads() == 0


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="langgraph"):
        TypedMemoryStore(prefix=("langgraph", "x"))
    with pytest.raises(ValueError, match="'a.b'"):
        TypedMemoryStore(prefix=("a.b",))
    with pytest.raises(ValueError, match="project_state_ttl_s"):
        TypedMemoryStore(project_state_ttl_s=-5)
    with pytest.raises(TypeError, match="BaseStore"):
        TypedMemoryStore(store={})


def test_corrupt_value_is_skipped(memory):
    memory.put("u1", "user_fact", "Good one")
    memory.store.put(memory.namespace("u1", "user_fact"), "junk", {"not": "a memory"})
    assert [m.content for m in memory.list("u1", "user_fact")] == ["Good one"]


def test_longest_ttl_is_accepted_by_every_store(memory):
    from promptcache.memory._records import MAX_TTL_S

    m = memory.put("u1", "project_state", "Archived for a century", ttl_s=MAX_TTL_S)
    assert (m.expires_at, MAX_TTL_S) == (m.created_at + MAX_TTL_S, 315_360_000.0)  # 10 years
    assert [x.content for x in memory.list("u1", "project_state")] == ["Archived for a century"]
    with pytest.raises(ValueError, match="project_state_ttl_s must be at most"):
        TypedMemoryStore(project_state_ttl_s=MAX_TTL_S * 2)


@pytest.mark.parametrize(
    "bad",
    [
        {"expires_at": "garbage"},
        {"expires_at": "nan"},
        {"expires_at": float("inf")},
        {"expires_at": True},
        {"created_at": "nan"},
        {"created_at": [1]},
    ],
)
async def test_corrupt_times_are_skipped_by_every_read_and_by_forget_expired(bad, caplog):
    store = InMemoryStore()
    memory = TypedMemoryStore(store)
    memory.put("u", "project_state", "real state")
    ns = memory.namespace("u", "project_state")
    store.put(ns, "bad", {"kind": "project_state", "content": "corrupt", "expires_at": 1.0, **bad})
    assert [m.content for m in memory.list("u", "project_state")] == ["real state"]
    assert [m.content for m in await memory.alist("u", "project_state")] == ["real state"]
    assert memory.get("u", "project_state", "bad") is None
    assert [m.content for m in memory.search("u", "project_state", "state")] == ["real state"]
    assert (memory.forget_expired("u"), await memory.aforget_expired("u")) == (0, 0)
    assert store.get(ns, "bad") is not None  # skipped, not deleted


async def test_search_names_a_non_string_query_and_a_bool_limit():
    memory = TypedMemoryStore()
    for call in (memory.search, memory.asearch):
        with pytest.raises(TypeError, match="query must be a string or None, got int: 5"):
            result = call("u", "user_fact", 5)
            if hasattr(result, "__await__"):
                await result
        with pytest.raises(ValueError, match="limit must be an int >= 1, got True"):
            result = call("u", "user_fact", "x", limit=True)
            if hasattr(result, "__await__"):
                await result


def test_record_round_trip():
    m = TypedMemory(
        id="c-1",
        kind=MemoryKind.REFERENCE,
        content="doc-9",
        subject=None,
        created_at=1.5,
        expires_at=None,
        metadata={"description": "spec"},
    )
    assert TypedMemory.from_dict(m.to_dict()) == m
    assert TypedMemory.from_value(m.to_value()) == m


# -- PostgreSQL TTL: set on write, never refreshed by our reads --------------------------------------------------
def _pg_expires_at(postgres_url, ns, key):
    import psycopg

    with psycopg.connect(postgres_url) as conn:
        row = conn.execute(
            "SELECT expires_at, ttl_minutes FROM store WHERE prefix = %s AND key = %s", (".".join(ns), key)
        ).fetchone()
    return row


def test_postgres_ttl_is_set_and_not_refreshed_by_reads(pg_store, postgres_url):
    prefix = ("pctest", uuid.uuid4().hex[:12])
    memory = TypedMemoryStore(pg_store, prefix=prefix)
    try:
        m = memory.put("u1", "project_state", "Migration at step 4", ttl_s=90)
        fact = memory.put("u1", "user_fact", "Speaks Malay")
        ns = memory.namespace("u1", "project_state")
        before, ttl_minutes = _pg_expires_at(postgres_url, ns, m.id)
        assert before is not None and ttl_minutes == 2  # 1.5 min, stored by LangGraph as an INT column
        assert _pg_expires_at(postgres_url, memory.namespace("u1", "user_fact"), fact.id)[0] is None
        time.sleep(0.05)
        memory.list("u1", "project_state")
        memory.get("u1", "project_state", m.id)
        memory.search("u1", "project_state", "migration")
        assert _pg_expires_at(postgres_url, ns, m.id)[0] == before
        pg_store.get(ns, m.id, refresh_ttl=True)  # what a default read would do: the expiry moves
        assert _pg_expires_at(postgres_url, ns, m.id)[0] > before
    finally:
        purge_prefix(pg_store, prefix)


def test_postgres_expired_state_never_returned_even_after_refreshing_reads(pg_store):
    prefix = ("pctest", uuid.uuid4().hex[:12])
    memory = TypedMemoryStore(pg_store, prefix=prefix)
    try:
        m = memory.put("u1", "project_state", "Order 42 ETA 3 pm", ttl_s=0.4)
        ns = memory.namespace("u1", "project_state")
        for _ in range(3):  # refreshing reads straight on the store
            assert pg_store.get(ns, m.id, refresh_ttl=True) is not None
        time.sleep(0.55)
        pg_store.search(ns, refresh_ttl=True)
        assert memory.list("u1", "project_state") == []
        assert memory.get("u1", "project_state", m.id) is None
        assert pg_store.get(ns, m.id, refresh_ttl=False) is not None  # still in the table until swept
        assert memory.forget_expired("u1", ["project_state"]) == 1
        assert pg_store.get(ns, m.id, refresh_ttl=False) is None
    finally:
        purge_prefix(pg_store, prefix)


# -- async twins -----------------------------------------------------------------------------------------------
async def _async_contract(memory: TypedMemoryStore) -> None:
    await memory.aput("u1", "project_state", "ETA for order 42 is 3 pm", subject="eta 42")
    await memory.aput("u1", "project_state", "ETA for order 42 is 5 pm", subject="eta 42")
    short = await memory.aput("u1", "project_state", "Deploy running", ttl_s=0.3)
    await memory.aput("u1", "feedback", "Be brief")
    await memory.aput("u1", "feedback", "be   BRIEF")
    await memory.aput("u2", "feedback", "Be verbose")
    assert [m.content for m in await memory.alist("u1", "feedback")] == ["be   BRIEF"]
    assert sorted(m.content for m in await memory.alist("u1", "project_state")) == [
        "Deploy running",
        "ETA for order 42 is 5 pm",
    ]
    time.sleep(0.4)
    assert [m.content for m in await memory.alist("u1", "project_state")] == ["ETA for order 42 is 5 pm"]
    assert await memory.aget("u1", "project_state", short.id) is None
    assert [m.content for m in await memory.asearch("u1", "project_state", "order 42")] == ["ETA for order 42 is 5 pm"]
    assert await memory.aforget_expired("u1") == 1
    fb = (await memory.alist("u2", "feedback"))[0]
    await memory.adelete("u2", "feedback", fb.id)
    assert await memory.alist("u2", "feedback") == []
    with pytest.raises(ValueError, match="unknown memory kind"):
        await memory.aput("u1", "note", "x")


async def test_async_twins_in_memory():
    await _async_contract(TypedMemoryStore(InMemoryStore(), prefix=("pctest", uuid.uuid4().hex[:12])))


async def test_async_twins_postgres(postgres_url):
    from langgraph.store.postgres import AsyncPostgresStore

    prefix = ("pctest", uuid.uuid4().hex[:12])
    async with AsyncPostgresStore.from_conn_string(postgres_url) as store:
        await store.setup()
        memory = TypedMemoryStore(store, prefix=prefix)
        try:
            await _async_contract(memory)
        finally:
            for ns in await store.alist_namespaces(prefix=prefix, limit=1000):
                for item in await store.asearch(ns, limit=1000, refresh_ttl=False):
                    await store.adelete(item.namespace, item.key)


def test_search_uses_the_store_index_when_it_has_one():
    from langchain_core.embeddings import DeterministicFakeEmbedding

    store = InMemoryStore(index={"dims": 16, "embed": DeterministicFakeEmbedding(size=16), "fields": ["content"]})
    memory = TypedMemoryStore(store)
    memory.put("u1", "project_state", "Order 42 ETA 17:00")
    memory.put("u1", "project_state", "Build is red", ttl_s=0.001)
    memory.put("u2", "project_state", "Order 42 ETA 17:00 for u2")
    time.sleep(0.01)
    found = memory.search("u1", "project_state", "Order 42 ETA 17:00")
    assert [m.content for m in found] == ["Order 42 ETA 17:00"]  # exact text = identical fake embedding
