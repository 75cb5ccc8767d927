"""MemoryNode in a StateGraph with a checkpointer, TypedMemoryMiddleware in create_agent, and the remember tool."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from support.memory import CountingStore

from promptcache.integrations.langgraph import MemoryNode, MemoryState
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore, make_remember_tool
from promptcache.testing import ScriptedChatModel

EXPECTED_PROMPT = (
    "Rules:\n"
    "Never mock the database in tests.\n\n"
    "About the user:\n"
    "The user is a backend engineer.\n\n"
    "References (fetch by id):\n"
    "[548f13] payments runbook\n\n"  # memory id c-548f132b93e3cbee767a9ce9 = c- + sha256(normalised URL)[:24]
    "Current state:\n"
    "ETA for order 42 is 5 pm"
)


class State(MessagesState, MemoryState):
    pass


def _seed(memory: TypedMemoryStore, user: str = "u1") -> str:
    memory.put(user, "feedback", "Never mock the database in tests.")
    memory.put(user, "user_fact", "The user is a backend engineer.")
    ref = memory.put(user, "reference", "https://wiki.example/payments", metadata={"description": "payments runbook"})
    memory.put(user, "project_state", "ETA for order 42 is 3 pm", subject="eta 42")
    memory.put(user, "project_state", "ETA for order 42 is 5 pm", subject="eta 42")
    memory.put("someone-else", "user_fact", "Secret fact of another user")
    return ref.id


def _graph(memory, model, **node_kwargs):
    def call_model(state):
        system = SystemMessage(state.get("memory_prompt", ""))
        return {"messages": [model.invoke([system, *state["messages"]])]}

    builder = StateGraph(State)
    builder.add_node("memory", MemoryNode(memory, **node_kwargs))
    builder.add_node("model", call_model)
    builder.add_edge(START, "memory")
    builder.add_edge("memory", "model")
    builder.add_edge("model", END)
    return builder.compile(checkpointer=MemorySaver())


QUESTIONS = [
    ("What's the ETA for order 42?", False),
    ("What is the difference between a process and a thread?", True),
    ("Any update on my order?", False),
    ("Is the deploy still running?", False),
]


def test_graph_reads_per_thread_and_per_turn():
    raw = CountingStore()
    memory = TypedMemoryStore(raw)
    _seed(memory)
    raw.ops.clear()
    model = ScriptedChatModel(replies=["ok"], cycle=True)
    graph = _graph(memory, model)
    config = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
    reads = []
    for question, conceptual in QUESTIONS:
        out = graph.invoke({"messages": [("user", question)]}, config)
        assert out["memory_turn"]["conceptual"] is conceptual
        reads.append(out["memory_turn"]["read"])
    assert reads == [["feedback", "user_fact", "reference", "project_state"], [], ["project_state"], ["project_state"]]
    # store reads, counted on the real store: per-thread kinds once, project state on the 3 work turns
    assert raw.reads("feedback") == 1 and raw.reads("user_fact") == 1 and raw.reads("reference") == 1
    assert raw.reads("project_state") == 3
    assert raw.writes() == 0
    # what the model saw: the whole block on work turns, no project state on the conceptual turn
    full = EXPECTED_PROMPT
    assert model.seen[0][0].content == full
    assert model.seen[1][0].content == full.split("\n\nCurrent state")[0]
    assert model.seen[2][0].content == full
    assert "Secret fact" not in full
    # the checkpointer holds what was loaded
    saved = graph.get_state(config).values
    assert [m["content"] for m in saved["memory_feedback"]] == ["Never mock the database in tests."]
    assert saved["memory_scope"] == "u1"
    # a new thread reads again
    graph.invoke(
        {"messages": [("user", "What's the ETA for order 42?")]}, {"configurable": {"thread_id": "t2", "user_id": "u1"}}
    )
    assert raw.reads("feedback") == 2 and raw.reads("user_fact") == 2 and raw.reads("project_state") == 4


def test_graph_sees_new_project_state_each_turn_but_not_expired():
    memory = TypedMemoryStore(CountingStore())
    memory.put("u1", "project_state", "Build 9 is red", subject="build")
    model = ScriptedChatModel(replies=["ok"], cycle=True)
    graph = _graph(memory, model)
    config = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
    assert (
        graph.invoke({"messages": [("user", "How is the build?")]}, config)["memory_project_state"][0]["content"]
        == "Build 9 is red"
    )
    memory.put("u1", "project_state", "Build 9 is green", subject="build")
    out = graph.invoke({"messages": [("user", "And now, is the build fixed?")]}, config)
    assert [m["content"] for m in out["memory_project_state"]] == ["Build 9 is green"]
    memory.put("u1", "project_state", "Build 9 is deploying", subject="build", ttl_s=0.001)
    import time

    time.sleep(0.01)
    out = graph.invoke({"messages": [("user", "Status of the build?")]}, config)
    assert out["memory_project_state"] == [] and "Build 9" not in out["memory_prompt"]


def test_scope_resolution_follows_the_shared_rule():
    memory = TypedMemoryStore(CountingStore())
    memory.put("u1", "user_fact", "fact of u1")
    memory.put("u2", "user_fact", "fact of u2")
    memory.put(None, "user_fact", "shared fact")
    node = MemoryNode(memory)
    state = {"messages": [("user", "hello")]}
    assert node.invoke(state, {"configurable": {"user_id": "u1"}})["memory_user_facts"][0]["content"] == "fact of u1"
    cfg = {"configurable": {"langgraph_auth_user_id": "u2"}}
    assert node.invoke(state, cfg)["memory_user_facts"][0]["content"] == "fact of u2"
    cfg = {"configurable": {"user_id": "u1", "promptcache.memory": {"scope": "u2"}}}
    assert node.invoke(state, cfg)["memory_user_facts"][0]["content"] == "fact of u2"
    assert node.invoke(state, {})["memory_user_facts"][0]["content"] == "shared fact"
    fixed = MemoryNode(memory, scope="u2")
    assert fixed.invoke(state, {"configurable": {"user_id": "u1"}})["memory_user_facts"][0]["content"] == "fact of u2"
    with pytest.raises(ValueError, match="namespace separator"):
        node.invoke(state, {"configurable": {"user_id": "a.b@example.com"}})
    # a different scope on the same thread state reloads
    first = node.invoke(state, {"configurable": {"user_id": "u1"}})
    again = node.invoke({**state, **first}, {"configurable": {"user_id": "u2"}})
    assert again["memory_turn"]["read"] == ["feedback", "user_fact", "reference", "project_state"]


def test_custom_classifier_and_graph_store():
    raw = CountingStore()
    _seed(TypedMemoryStore(raw))
    raw.ops.clear()
    node = MemoryNode(classifier=lambda q: q.endswith("?"))  # memory=None: the graph's store
    builder = StateGraph(State)
    builder.add_node("memory", node)
    builder.add_edge(START, "memory")
    graph = builder.compile(store=raw)
    out = graph.invoke({"messages": [("user", "anything?")]}, {"configurable": {"user_id": "u1"}})
    assert out["memory_turn"] == {
        "question": "anything?",
        "conceptual": True,
        "read": ["feedback", "user_fact", "reference"],
    }
    assert raw.reads("project_state") == 0


async def test_async_graph_reads_once_per_thread():
    raw = CountingStore()
    memory = TypedMemoryStore(raw)
    _seed(memory)
    raw.ops.clear()
    model = ScriptedChatModel(replies=["ok"], cycle=True)
    graph = _graph(memory, model)
    config = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
    for question, _ in QUESTIONS:
        await graph.ainvoke({"messages": [("user", question)]}, config)
    assert (raw.reads("feedback"), raw.reads("user_fact"), raw.reads("project_state")) == (1, 1, 3)


def _agent(memory, model, **kw):
    return create_agent(
        model,
        tools=[],
        middleware=[TypedMemoryMiddleware(memory, **kw)],
        system_prompt="You are helpful.",
        checkpointer=MemorySaver(),
    )


def test_create_agent_applies_the_same_policy():
    raw = CountingStore()
    memory = TypedMemoryStore(raw)
    _seed(memory)
    raw.ops.clear()
    model = ScriptedChatModel(replies=["ok"], cycle=True)
    agent = _agent(memory, model)
    config = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
    turns = [agent.invoke({"messages": [("user", q)]}, config)["memory_turn"]["read"] for q, _ in QUESTIONS]
    assert turns == [["feedback", "user_fact", "reference", "project_state"], [], ["project_state"], ["project_state"]]
    assert (raw.reads("feedback"), raw.reads("user_fact"), raw.reads("project_state")) == (1, 1, 3)
    full = EXPECTED_PROMPT
    # without prompt caching the agent's string system prompt stays a string (a byte prefix), the block after it
    assert model.seen[0][0].content == "You are helpful.\n\n" + full
    assert model.seen[1][0].content == "You are helpful.\n\n" + full.split("\n\nCurrent state")[0]
    # the graph state itself was not changed by the request hook: the system prompt lives outside it
    state = agent.get_state(config).values
    assert all(m.type != "system" for m in state["messages"])


async def test_create_agent_async_and_agent_store():
    raw = CountingStore()
    _seed(TypedMemoryStore(raw))
    raw.ops.clear()
    model = ScriptedChatModel(replies=["ok"], cycle=True)
    agent = create_agent(model, tools=[], middleware=[TypedMemoryMiddleware()], store=raw, checkpointer=MemorySaver())
    config = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
    for q, _ in QUESTIONS:
        await agent.ainvoke({"messages": [("user", q)]}, config)
    assert (raw.reads("feedback"), raw.reads("reference"), raw.reads("project_state")) == (1, 1, 3)
    assert model.seen[0][0].content.startswith("Rules:\nNever mock")


def test_tool_loop_steps_do_not_reload():
    """One turn with a tool call = two model calls, one load; both calls see the memory block."""
    from langchain_core.tools import tool

    @tool
    def lookup(order: str) -> str:
        """Look an order up."""
        return f"order {order}: shipped"

    raw = CountingStore()
    memory = TypedMemoryStore(raw)
    _seed(memory)
    raw.ops.clear()
    model = ScriptedChatModel(
        replies=[AIMessage("", tool_calls=[{"name": "lookup", "args": {"order": "42"}, "id": "c1"}]), "shipped"]
    )
    agent = create_agent(model, tools=[lookup], middleware=[TypedMemoryMiddleware(memory)], checkpointer=MemorySaver())
    agent.invoke(
        {"messages": [("user", "Where is my order 42?")]}, {"configurable": {"thread_id": "t1", "user_id": "u1"}}
    )
    assert model.calls == 2 and raw.reads("project_state") == 1
    assert all("ETA for order 42 is 5 pm" in seen[0].content for seen in model.seen)


def test_remember_tool_uses_the_config_user():
    raw = CountingStore()
    memory = TypedMemoryStore(raw)
    remember = make_remember_tool(memory)
    assert set(remember.args) == {"kind", "content", "subject", "ttl_s"}  # no user id for the model to set
    cfg = {"configurable": {"user_id": "u7"}}
    out = remember.invoke({"kind": "project_state", "content": "ETA 3 pm", "subject": "eta"}, cfg)
    assert out.startswith("saved project_state memory s-")
    remember.invoke({"kind": "project_state", "content": "ETA 5 pm", "subject": "eta", "ttl_s": 30}, cfg)
    assert [m.content for m in memory.list("u7", "project_state")] == ["ETA 5 pm"]
    writes = raw.writes()
    assert remember.invoke({"kind": "opinion", "content": "x"}, cfg) == (
        "memory not saved: kind: Input should be 'user_fact', 'feedback', 'project_state' or 'reference' "
        "(got 'opinion')"
    )
    assert "ttl_s must be" in remember.invoke({"kind": "feedback", "content": "x", "ttl_s": -1}, cfg)
    assert "content must not be empty" in remember.invoke({"kind": "feedback", "content": "  "}, cfg)
    assert "no user" in remember.invoke({"kind": "feedback", "content": "be brief"}, {})
    assert raw.writes() == writes


async def test_remember_tool_async_via_graph_store():
    raw = CountingStore()
    remember = make_remember_tool()  # the graph's store at run time
    builder = StateGraph(State)

    async def node(state, config):
        await remember.ainvoke({"kind": "user_fact", "content": "Likes tea"}, config)
        return {}

    builder.add_node("write", node)
    builder.add_edge(START, "write")
    graph = builder.compile(store=raw)
    await graph.ainvoke({"messages": [("user", "hi")]}, {"configurable": {"user_id": "u3"}})
    assert [m.content for m in TypedMemoryStore(raw).list("u3", "user_fact")] == ["Likes tea"]


def test_a_write_through_the_same_store_reloads_the_thread_memories():
    raw = CountingStore()
    memory = TypedMemoryStore(raw)
    _seed(memory)
    model = ScriptedChatModel(replies=["ok"], cycle=True)
    graph = _graph(memory, model)
    config = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
    graph.invoke({"messages": [("user", "What's the ETA for order 42?")]}, config)
    raw.ops.clear()
    graph.invoke({"messages": [("user", "Is the build green?")]}, config)
    assert raw.reads("user_fact") == 0
    remember = make_remember_tool(memory)
    remember.invoke({"kind": "user_fact", "content": "Is on call this week."}, config)
    memory.put("u1", "project_state", "Build 3 is green")  # project state does not invalidate
    memory.put("u2", "user_fact", "another user's write does not either")
    raw.ops.clear()
    out = graph.invoke({"messages": [("user", "Am I on call?")]}, config)
    assert out["memory_turn"]["read"] == ["feedback", "user_fact", "reference", "project_state"]
    assert [m["content"] for m in out["memory_user_facts"]] == [
        "The user is a backend engineer.",
        "Is on call this week.",
    ]
    raw.ops.clear()
    graph.invoke({"messages": [("user", "Anything new today?")]}, config)
    assert (raw.reads("user_fact"), raw.reads("project_state")) == (0, 1)


def test_node_tool_and_middleware_share_one_typed_store_per_base_store():
    raw = CountingStore()
    assert TypedMemoryStore.for_store(raw) is TypedMemoryStore.for_store(raw)
    assert MemoryNode(raw).memory is TypedMemoryStore.for_store(raw)


def test_memory_node_on_postgres_store(postgres_url):
    """The same per-thread / per-turn policy with a real PostgresStore under the node."""
    import uuid

    from langgraph.store.postgres import PostgresStore
    from support.memory import purge_prefix

    prefix = ("pctest", uuid.uuid4().hex[:12])
    with PostgresStore.from_conn_string(postgres_url) as store:
        store.setup()
        try:
            memory = TypedMemoryStore(store, prefix=prefix)
            _seed(memory)
            memory.put("u1", "project_state", "Deploy running", ttl_s=0.001)
            graph = _graph(memory, ScriptedChatModel(replies=["ok"], cycle=True))
            config = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
            reads = [graph.invoke({"messages": [("user", q)]}, config)["memory_turn"]["read"] for q, _ in QUESTIONS]
            assert reads == [
                ["feedback", "user_fact", "reference", "project_state"],
                [],
                ["project_state"],
                ["project_state"],
            ]
            state = graph.get_state(config).values
            assert state["memory_prompt"] == EXPECTED_PROMPT
        finally:
            purge_prefix(store, prefix)


def test_middleware_per_call_scope_and_chat_model_classifier_stays_out_of_the_stream():
    raw = CountingStore()
    memory = TypedMemoryStore(raw)
    _seed(memory, user="u9")
    classifier_model = ScriptedChatModel(replies=["work"], cycle=True)
    model = ScriptedChatModel(replies=["answer"], cycle=True)
    agent = create_agent(
        model,
        tools=[],
        checkpointer=MemorySaver(),
        middleware=[TypedMemoryMiddleware(memory, classifier=classifier_model)],
    )
    config = TypedMemoryMiddleware.context(scope="u9")
    config["configurable"].update(thread_id="t1", user_id="u1")
    chunks = [
        m.content
        for m, _ in agent.stream({"messages": [("user", "Where is order 42?")]}, config, stream_mode="messages")
    ]
    assert "work" not in chunks and "answer" in "".join(chunks)
    assert classifier_model.calls == 1
    assert "ETA for order 42 is 5 pm" in model.seen[0][0].content  # u9's memories, not u1's
    with pytest.raises(ValueError, match="unknown per-call option"):
        TypedMemoryMiddleware.context(user="u9")


async def test_a_raising_classifier_falls_back_to_the_rules_and_is_logged_once(monkeypatch, caplog):
    from promptcache._log import ThrottledWarning
    from promptcache.memory import _policy as policy

    monkeypatch.setattr(policy, "_classifier_failed", ThrottledWarning(policy._log))
    calls = []

    def classifier(question):
        calls.append(question)
        raise RuntimeError("classifier down")

    node, config = MemoryNode(TypedMemoryStore(), classifier=classifier), {"configurable": {"user_id": "u"}}
    turns = [
        node.invoke({"messages": [HumanMessage("What is a cache point?")]}, config)["memory_turn"],
        (await node.ainvoke({"messages": [HumanMessage("Any update on my order?")]}, config))["memory_turn"],
    ]
    assert [(t["conceptual"], t["read"][-1]) for t in turns] == [(True, "reference"), (False, "project_state")]
    assert len(calls) == 2
    lines = [r.getMessage() for r in caplog.records if r.name == "promptcache.memory"]
    assert lines == [
        ("the conceptual-question classifier failed; using the default rules: RuntimeError: classifier down")
    ]


@pytest.mark.parametrize(
    "corrupt", [[{"bad": 1}], "not a list", [{"kind": "feedback", "content": "x", "expires_at": "nan"}]]
)
async def test_a_corrupt_memory_in_state_reloads_from_the_store(corrupt):
    raw = CountingStore()
    memory = TypedMemoryStore(raw)
    memory.put("u", "feedback", "Be brief.")
    state = {
        "messages": [HumanMessage("hi")],
        "memory_scope": "u",
        "memory_version": memory.write_token("u"),
        "memory_feedback": corrupt,
    }
    raw.ops.clear()
    for update in (
        MemoryNode(memory).invoke(state, {"configurable": {"user_id": "u"}}),
        await MemoryNode(memory).ainvoke(state, {"configurable": {"user_id": "u"}}),
    ):
        assert update["memory_prompt"] == "Rules:\nBe brief."
        assert [m["content"] for m in update["memory_feedback"]] == ["Be brief."]
    assert raw.reads("feedback") == 2
    # a valid state is still used as is: no read of the per-thread kinds
    raw.ops.clear()
    state["memory_feedback"] = update["memory_feedback"]
    MemoryNode(memory).invoke(state, {"configurable": {"user_id": "u"}})
    assert raw.reads("feedback") == 0


@pytest.mark.parametrize(
    "scope, error", [("", ValueError), ("a.b", ValueError), ("_unscoped", ValueError), (1.5, TypeError)]
)
def test_every_memory_processor_and_tool_checks_a_fixed_scope_at_construction(scope, error):
    from promptcache.memory import make_reference_tool

    for factory in (MemoryNode, TypedMemoryMiddleware, make_remember_tool, make_reference_tool):
        with pytest.raises(error, match="scope"):
            factory(TypedMemoryStore(), scope=scope)
    for ok in (None, "u1", "7"):
        assert MemoryNode(TypedMemoryStore(), scope=ok).scope == ok
