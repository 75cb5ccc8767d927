"""Typed memory (store, node, middleware, remember tool) with bad input: clear errors, nothing written."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore
from support.hardening import INF, NAN

from promptcache.testing import ScriptedChatModel


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
