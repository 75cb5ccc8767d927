"""IntentionCache(serve_repeats=True): a repeated tool call is answered from memory without running the tool, in a
create_agent run on a scripted model, on both backends, sync and async; and the side-effect deny list."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from promptcache.intention import IntentionCache, IntentionMemory
from promptcache.intention._middleware import DEFAULT_SIDE_EFFECT_PREFIXES
from promptcache.testing import ScriptedChatModel

ASK = "My user id is omar_3817, what are my reservations?"
CONFIG = {"configurable": {"user_id": "u1"}}


@pytest.fixture(params=["memory", "redis"])
def memory(request):
    if request.param == "memory":
        return IntentionMemory(ttl_s=600)
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    backend = RedisIntentionBackend(
        url=request.getfixturevalue("redis_url"), prefix=request.getfixturevalue("redis_prefix")
    )
    return IntentionMemory(backend, ttl_s=600)


def tc(name: str, args: dict, cid: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": cid}])


def build(memory: IntentionMemory, replies: list, **kwargs):
    ran: list[tuple[str, str]] = []

    @tool
    def get_reservation_details(reservation_id: str, timestamp: str = "") -> str:
        """Details of a reservation."""
        ran.append(("get_reservation_details", reservation_id))
        return f'{{"id":"{reservation_id}","n":{len(ran)}}}'

    @tool
    def book_reservation(flight: str) -> str:
        """Book a flight."""
        ran.append(("book_reservation", flight))
        return f"booked {flight} #{len(ran)}"

    model = ScriptedChatModel(replies=replies)
    agent = create_agent(
        model, tools=[get_reservation_details, book_reservation], middleware=[IntentionCache(memory, **kwargs)]
    )
    return agent, model, ran


def script() -> list:
    return [
        tc("get_reservation_details", {"reservation_id": "JG7", "timestamp": "10:00"}, "c1"),  # runs
        tc("get_reservation_details", {"reservation_id": "JG7", "timestamp": "10:01"}, "c2"),  # served (volatile ts)
        tc("get_reservation_details", {"reservation_id": "LQ9"}, "c3"),  # other args: runs
        tc("book_reservation", {"flight": "HAT001"}, "c4"),  # deny-listed: runs
        tc("book_reservation", {"flight": "HAT001"}, "c5"),  # deny-listed: runs again, never served
        "Done.",
    ]


def tool_messages(state: dict) -> list[tuple]:
    return [
        (m.tool_call_id, m.content, (m.response_metadata.get("promptcache") or {}).get("intention_cache"))
        for m in state["messages"]
        if isinstance(m, ToolMessage)
    ]


EXPECTED = [
    ("c1", '{"id":"JG7","n":1}', None),
    ("c2", '{"id":"JG7","n":1}', "hit"),
    ("c3", '{"id":"LQ9","n":2}', None),
    ("c4", "booked HAT001 #3", None),
    ("c5", "booked HAT001 #4", None),
]
RAN = [
    ("get_reservation_details", "JG7"),
    ("get_reservation_details", "LQ9"),
    ("book_reservation", "HAT001"),
    ("book_reservation", "HAT001"),
]


def test_serve_repeats_answers_a_repeated_call_without_running_the_tool(memory):
    agent, model, ran = build(memory, script(), serve_repeats=True)
    state = agent.invoke({"messages": [HumanMessage(ASK)]}, config=CONFIG)
    assert tool_messages(state) == EXPECTED
    assert ran == RAN  # get_reservation_details ran once for JG7
    assert model.calls == 6
    hit = next(m for m in state["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "c2")
    meta = hit.response_metadata["promptcache"]
    assert (hit.name, hit.status, meta["kind"], meta["intention"]) == (
        "get_reservation_details",
        "success",
        "exact",
        ASK,
    )


async def test_serve_repeats_async(memory):
    agent, model, ran = build(memory, script(), serve_repeats=True)
    state = await agent.ainvoke({"messages": [HumanMessage(ASK)]}, config=CONFIG)
    assert tool_messages(state) == EXPECTED
    assert ran == RAN


def test_off_by_default_every_call_runs(memory):
    agent, _, ran = build(memory, script()[:3] + ["Done."])
    state = agent.invoke({"messages": [HumanMessage(ASK)]}, config=CONFIG)
    assert [c for _, _, c in tool_messages(state)] == [None, None, None]
    assert ran == [
        ("get_reservation_details", "JG7"),
        ("get_reservation_details", "JG7"),
        ("get_reservation_details", "LQ9"),
    ]


@pytest.mark.parametrize("aio", [False, True])
async def test_only_an_exact_intention_short_circuits(memory, aio):
    replies = [
        tc("get_reservation_details", {"reservation_id": "JG7"}, "c1"),
        "ok",
        tc("get_reservation_details", {"reservation_id": "JG7"}, "c2"),
        "ok",
        tc("get_reservation_details", {"reservation_id": "JG7"}, "c3"),
        "ok",
    ]
    agent, _, ran = build(memory, replies, serve_repeats=True)

    async def turn(text: str, config: dict = CONFIG) -> dict:
        payload = {"messages": [HumanMessage(text)]}
        return await agent.ainvoke(payload, config=config) if aio else agent.invoke(payload, config=config)

    await turn(ASK)
    similar = await turn("my user id is omar_3817, what are all my reservations please")  # similar, not exact
    assert tool_messages(similar)[0][2] is None
    other_user = await turn(ASK, {"configurable": {"user_id": "u2"}})
    assert tool_messages(other_user)[0][2] is None
    assert len(ran) == 3


def test_serve_similar_opt_in(memory):
    replies = [
        tc("get_reservation_details", {"reservation_id": "JG7"}, "c1"),
        "ok",
        tc("get_reservation_details", {"reservation_id": "JG7"}, "c2"),
        "ok",
    ]
    agent, _, ran = build(memory, replies, serve_repeats=True, serve_similar=True)
    agent.invoke({"messages": [HumanMessage(ASK)]}, config=CONFIG)
    state = agent.invoke(
        {"messages": [HumanMessage("my user id is omar_3817, what are my reservations please")]}, config=CONFIG
    )
    assert tool_messages(state) == [("c2", '{"id":"JG7","n":1}', "hit")]
    assert state["messages"][2].response_metadata["promptcache"]["kind"] == "similar"
    assert len(ran) == 1


def test_expired_memory_is_not_served():
    now = [1000.0]
    memory = IntentionMemory(ttl_s=60, clock=lambda: now[0])
    cache = IntentionCache(memory, serve_repeats=True)
    memory.store("u1", ASK, "old", tool="get_reservation_details", args={"reservation_id": "JG7"})

    class Request:
        tool_call = {"name": "get_reservation_details", "args": {"reservation_id": "JG7"}, "id": "c9"}
        state = {"messages": [HumanMessage(ASK)]}
        runtime = type("R", (), {"config": CONFIG})()

    fresh = ToolMessage("new", tool_call_id="c9", name="get_reservation_details")
    assert cache.wrap_tool_call(Request(), lambda r: fresh).content == "old"
    now[0] += 61
    assert cache.wrap_tool_call(Request(), lambda r: fresh) is fresh


TAU_WRITES = [
    "book_reservation",
    "cancel_reservation",
    "update_reservation_flights",
    "send_certificate",
    "transfer_to_human_agents",
    "Book_Flight",
    "modify_order",
    "change_seat",
    "pay_invoice",
    "remove_item",
    "add_item",
    "submit_form",
    "set_status",
    "post_comment",
    "put_object",
    "patch_user",
    "reset_password",
    "approve_request",
    "reject_request",
    "refund_payment",
    "email_customer",
]
TAU_READS = [
    "get_reservation_details",
    "get_user_details",
    "search_direct_flight",
    "search_onestop_flight",
    "list_all_airports",
    "calculate",
    "think",
    "lookup_order",
    "fetch_page",
    "check_status",
]


def test_default_deny_list_covers_state_changing_verbs_and_spares_reads():
    assert DEFAULT_SIDE_EFFECT_PREFIXES[:5] == ("send_", "delete_", "create_", "update_", "write_")
    cache = IntentionCache(IntentionMemory())
    assert [n for n in TAU_WRITES if cache.should_store(n)] == []
    assert [n for n in TAU_READS if not cache.should_store(n)] == []
    custom = IntentionCache(IntentionMemory(), deny_prefixes=["Fetch_"])
    assert (custom.should_store("fetch_page"), custom.should_store("book_reservation")) == (False, True)
