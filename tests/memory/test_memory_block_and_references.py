"""The compact memory block, reference pointers (short ids) and the read_reference tool."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from support.memory import CountingStore

from promptcache.memory import (
    MemoryKind,
    TypedMemory,
    TypedMemoryMiddleware,
    TypedMemoryStore,
    make_reference_tool,
    make_remember_tool,
    render_memory_block,
)
from promptcache.memory._references import find_reference, reference_ids, short_reference_id
from promptcache.testing import ScriptedChatModel

URL = "https://wiki.example/payments"
URL_ID = "c-548f132b93e3cbee767a9ce9"  # c- + sha256("https://wiki.example/payments")[:24]


def _mem(kind, content, *, t=0.0, mid=None, subject=None, description=None):
    return TypedMemory(
        id=mid or f"c-{int(t):024d}",
        kind=kind,
        content=content,
        subject=subject,
        created_at=t,
        metadata={"description": description} if description else {},
    )


def test_block_layout_is_compact_and_independent_of_input_order():
    K = MemoryKind
    memories = {
        K.PROJECT_STATE: [_mem(K.PROJECT_STATE, "Build #9\n  is   green.", t=5)],
        K.REFERENCE: [
            _mem(K.REFERENCE, "docs/spec.yaml", t=2, mid="c-bbbbbb11", description="orders spec"),
            _mem(K.REFERENCE, "https://x.example/a", t=1, mid="s-aaaaaa22", subject="runbook"),
        ],
        K.USER_FACT: [_mem(K.USER_FACT, "Leads the API team.", t=3), _mem(K.USER_FACT, "Uses Python.", t=1)],
        K.FEEDBACK: [_mem(K.FEEDBACK, "Be brief.", t=1)],
    }
    expected = (
        "Rules:\nBe brief.\n\n"
        "About the user:\nUses Python.\nLeads the API team.\n\n"
        "References (fetch by id):\n[aaaaaa] runbook\n[bbbbbb] orders spec\n\n"
        "Current state:\nBuild #9 is green."
    )
    assert render_memory_block(memories) == expected
    shuffled = {k: list(reversed(v)) for k, v in reversed(list(memories.items()))}
    assert render_memory_block(shuffled) == expected
    as_dicts = {k: [m.to_dict() for m in v] for k, v in memories.items()}
    assert render_memory_block(as_dicts) == expected
    assert render_memory_block({}) == "" and render_memory_block({K.FEEDBACK: []}) == ""


def test_a_reference_never_shows_its_contents():
    memory = TypedMemoryStore()
    with_desc = memory.put("u1", "reference", URL, metadata={"description": "payments runbook"})
    assert with_desc.id == URL_ID
    long_note = memory.put("u1", "reference", "A long design note. " * 20, subject="design note")
    bare = memory.put("u1", "reference", "x" * 120)
    block = render_memory_block({MemoryKind.REFERENCE: [with_desc, long_note, bare]})
    lines = block.splitlines()
    assert lines[0] == "References (fetch by id):"
    assert lines[1] == "[548f13] payments runbook"
    assert lines[2] == f"[{short_reference_id(long_note)}] design note"
    # no description and no subject: the contents are all there is to show, cut to 80 characters
    assert lines[3] == f"[{short_reference_id(bare)}] " + "x" * 77 + "..."
    assert URL not in block and "long design note" not in block


def test_short_ids_that_collide_get_longer_by_their_ids_only():
    a = _mem(MemoryKind.REFERENCE, "a", mid="c-abcdef01ffff")
    b = _mem(MemoryKind.REFERENCE, "b", mid="s-abcdef02ffff")
    c = _mem(MemoryKind.REFERENCE, "c", mid="c-123456ffffff")
    assert reference_ids([a, b, c]) == {a.id: "abcdef01", b.id: "abcdef02", c.id: "123456"}
    assert reference_ids([c, b, a]) == reference_ids([a, b, c])
    assert reference_ids([a, c]) == {a.id: "abcdef", c.id: "123456"}
    block = render_memory_block({MemoryKind.REFERENCE: [a, b]})
    assert block == "References (fetch by id):\n[abcdef01] a\n[abcdef02] b"


def test_find_reference_accepts_short_id_full_id_and_subject():
    a = _mem(MemoryKind.REFERENCE, "A", mid="c-abcdef01ffff")
    b = _mem(MemoryKind.REFERENCE, "B", mid="s-abcdef02ffff", subject="On-call  Runbook")
    refs = [a, b]
    assert find_reference(refs, "abcdef01") is a
    assert find_reference(refs, "[abcdef02]") is b and find_reference(refs, " #ABCDEF02 ") is b
    assert find_reference(refs, "c-abcdef01ffff") is a
    assert find_reference(refs, "on-call runbook") is b
    assert find_reference(refs, "abcdef") is None  # matches both: ambiguous
    assert find_reference(refs, "abcd") is None  # shorter than a short id
    assert find_reference(refs, "999999") is None and find_reference(refs, "  ") is None
    with pytest.raises(TypeError, match="ref_id must be a string"):
        find_reference(refs, 42)


def test_read_reference_tool_reads_the_config_users_reference_only():
    raw = CountingStore()
    memory = TypedMemoryStore(raw)
    memory.put("u1", "reference", URL, metadata={"description": "payments runbook"})
    memory.put("u1", "reference", "docs/orders.yaml", subject="orders spec")
    other = memory.put("u2", "reference", "https://secret.example", metadata={"description": "u2's doc"})
    tool = make_reference_tool(memory)
    assert tool.name == "read_reference" and set(tool.args) == {"ref_id"}  # no user id for the model to set
    cfg = {"configurable": {"user_id": "u1"}}
    assert tool.invoke({"ref_id": "548f13"}, cfg) == f"payments runbook: {URL}"
    assert tool.invoke({"ref_id": "[548f13]"}, cfg) == f"payments runbook: {URL}"
    assert tool.invoke({"ref_id": "orders spec"}, cfg) == "docs/orders.yaml"
    assert tool.invoke({"ref_id": short_reference_id(other)}, cfg) == (
        f"no reference '{short_reference_id(other)}' for this user; use an id from the References section"
    )
    assert tool.invoke({"ref_id": "548f13"}, {}) == (
        "no user in the call's config (configurable['user_id']); cannot read references"
    )
    assert raw.writes() == 3  # reading never writes
    assert raw.version_ops("put") == 3  # one new version per memory written


def test_read_reference_tool_does_not_return_an_expired_reference():
    now = [1000.0]
    memory = TypedMemoryStore(clock=lambda: now[0])
    ref = memory.put("u1", "reference", "https://tmp.example", ttl_s=10)
    tool = make_reference_tool(memory, scope="u1")
    assert tool.invoke({"ref_id": short_reference_id(ref)}) == "https://tmp.example"
    now[0] += 10
    assert tool.invoke({"ref_id": short_reference_id(ref)}).startswith("no reference")


def test_reference_tool_factory_rejects_a_wrong_memory_argument():
    with pytest.raises(TypeError, match="memory must be a TypedMemoryStore, a BaseStore or None, got dict"):
        make_reference_tool({})


def test_remember_a_reference_tells_the_model_its_id():
    memory = TypedMemoryStore()
    remember = make_remember_tool(memory)
    out = remember.invoke({"kind": "reference", "content": URL}, {"configurable": {"user_id": "u1"}})
    assert out == f"saved reference memory {URL_ID} (read it back with id 548f13)"


async def test_read_reference_tool_async_via_graph_store():
    raw = CountingStore()
    TypedMemoryStore.for_store(raw).put("u3", "reference", URL, metadata={"description": "payments runbook"})
    tool = make_reference_tool()  # the graph's store at run time
    seen = []

    async def node(state, config):
        seen.append(await tool.ainvoke({"ref_id": "548f13"}, config))
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("read", node)
    builder.add_edge(START, "read")
    await builder.compile(store=raw).ainvoke({"messages": [("user", "hi")]}, {"configurable": {"user_id": "u3"}})
    assert seen == [f"payments runbook: {URL}"]


def test_agent_sees_the_pointer_and_fetches_the_contents():
    memory = TypedMemoryStore()
    memory.put("u1", "reference", URL, metadata={"description": "payments runbook"})
    model = ScriptedChatModel(
        replies=[
            AIMessage("", tool_calls=[{"name": "read_reference", "args": {"ref_id": "548f13"}, "id": "c1"}]),
            "It is at the wiki.",
        ]
    )
    middleware = TypedMemoryMiddleware(memory)  # registers read_reference itself
    assert [t.name for t in middleware.tools] == ["read_reference"]
    agent = create_agent(model, tools=[], checkpointer=MemorySaver(), middleware=[middleware])
    out = agent.invoke(
        {"messages": [("user", "Where is the payments runbook?")]},
        {"configurable": {"thread_id": "t1", "user_id": "u1"}},
    )
    assert model.seen[0][0].content == "References (fetch by id):\n[548f13] payments runbook"
    assert out["messages"][2].type == "tool" and out["messages"][2].content == f"payments runbook: {URL}"


def test_middleware_tool_switches_and_the_per_call_scope():
    memory = TypedMemoryStore()
    assert TypedMemoryMiddleware(memory, reference_tool=False).tools == []
    assert TypedMemoryMiddleware(memory, load_references=False).tools == []
    memory.put("u9", "reference", URL, metadata={"description": "payments runbook"})
    tool = TypedMemoryMiddleware(memory).tools[0]
    config = TypedMemoryMiddleware.context(scope="u9")  # the app's per-call scope wins over user_id, as for loads
    config["configurable"]["user_id"] = "u1"
    assert tool.invoke({"ref_id": "548f13"}, config) == f"payments runbook: {URL}"
    assert tool.invoke({"ref_id": "548f13"}, {"configurable": {"user_id": "u1"}}).startswith("no reference")


def test_explicit_none_scope_reads_and_writes_the_unscoped_memories():
    memory = TypedMemoryStore()
    make_remember_tool(memory, scope=None).invoke({"kind": "reference", "content": URL})
    assert [m.id for m in memory.list(None, "reference")] == [URL_ID]
    assert make_reference_tool(memory, scope=None).invoke({"ref_id": "548f13"}) == URL
    assert make_reference_tool(memory).invoke({"ref_id": "548f13"}).startswith("no user in the call's config")
