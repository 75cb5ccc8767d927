"""Typed memory with corrupt stored values, bad input, expiry on every read: nothing lost, nothing stale."""

from __future__ import annotations

import asyncio
import datetime
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore
from support.memory_intention import Clock

from promptcache.integrations.langgraph import MemoryNode
from promptcache.memory import TypedMemoryStore, make_reference_tool

USER = {"configurable": {"user_id": "u"}}


def _planted(kind_ns: str, value: dict, scope: str = "u") -> TypedMemoryStore:
    store = InMemoryStore()
    memory = TypedMemoryStore(store)
    store.put(memory.namespace(scope, kind_ns), "planted", value)
    return memory


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
