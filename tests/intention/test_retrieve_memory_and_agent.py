"""The retrieve_memory tool and the IntentionCache processor, alone and in a create_agent agent on a fake model."""

from __future__ import annotations

import logging

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from promptcache.intention import IntentionCache, IntentionMemory, make_retrieve_memory_tool
from promptcache.intention._tool import MEMORY_ERROR, MEMORY_NOT_FOUND, RETRIEVE_MEMORY_DESCRIPTION
from promptcache.testing import ScriptedChatModel

BALANCE = "What is my account balance?"
BALANCE_LISTED = (
    '1 result stored for this intention:\n[1] lookup_balance({"account":"main"}):\nBalance of main: 1000 EUR'
)


def user(uid: str) -> dict:
    return {"configurable": {"user_id": uid}}


@pytest.fixture
def memory():
    return IntentionMemory(ttl_s=600)


def test_tool_schema_is_the_patterns(memory):
    t = make_retrieve_memory_tool(memory)
    assert t.name == "retrieve_memory"
    assert t.description == RETRIEVE_MEMORY_DESCRIPTION
    schema = t.tool_call_schema.model_json_schema()
    assert schema["required"] == ["intention"]
    assert list(schema["properties"]) == ["intention"]
    assert schema["properties"]["intention"]["type"] == "string"
    assert schema["properties"]["intention"]["description"] == "The intention of the user."


def test_tool_exact_similar_miss_and_no_user(memory):
    memory.store("u1", "What is the weather in Paris today?", "21 C", tool="get_weather", args={"city": "Paris"})
    t = make_retrieve_memory_tool(memory)
    listed = '1 result stored for this intention:\n[1] get_weather({"city":"Paris"}):\n21 C'
    assert t.invoke({"intention": "what is the weather in paris today"}, config=user("u1")) == listed
    similar = t.invoke({"intention": "What's the weather like in Paris today?"}, config=user("u1"))
    assert similar == (
        "No exact memory. It answers an earlier intention, earlier: 'What is the weather in Paris today?' "
        "(similarity 0.81; same meaning; wording: yours adds 'like'). Use it only if that is what is asked now; "
        'its result from get_weather({"city":"Paris"}), 0s old:\n21 C'
    )
    assert t.invoke({"intention": "What is the weather in London today?"}, config=user("u1")) == MEMORY_NOT_FOUND
    assert t.invoke({"intention": "What is the weather in Paris today?"}, config=user("u2")) == MEMORY_NOT_FOUND
    assert t.invoke({"intention": "What is the weather in Paris today?"}) == MEMORY_NOT_FOUND  # no user id
    assert t.invoke({"intention": "?!"}, config=user("u1")) == MEMORY_NOT_FOUND
    fixed = make_retrieve_memory_tool(memory, scope="u1")
    assert fixed.invoke({"intention": "What is the weather in Paris today?"}) == listed
    memory.store("u1", "What is my name?", "Ana")  # no tool recorded: the result as is (the pattern's contract)
    assert t.invoke({"intention": "what is my name"}, config=user("u1")) == "Ana"


def test_tool_user_id_from_config_never_from_model_arguments(memory):
    memory.store("victim", BALANCE, "1000 EUR")
    t = make_retrieve_memory_tool(memory)
    call = {
        "name": "retrieve_memory",
        "args": {"intention": BALANCE, "user_id": "victim"},
        "id": "c1",
        "type": "tool_call",
    }
    out = t.invoke(call, config=user("attacker"))
    assert isinstance(out, ToolMessage) and out.content == MEMORY_NOT_FOUND


async def test_tool_async_and_backend_failure(redis_url, caplog):
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    dead = IntentionMemory(RedisIntentionBackend(url="redis://127.0.0.1:1/0", socket_timeout_s=0.05), ttl_s=60)
    t = make_retrieve_memory_tool(dead)
    with caplog.at_level(logging.WARNING, logger="promptcache"):
        assert t.invoke({"intention": BALANCE}, config=user("u1")) == MEMORY_ERROR
    assert "intention memory lookup failed" in caplog.text
    assert await t.ainvoke({"intention": BALANCE}, config=user("u1")) == MEMORY_ERROR
    assert dead.store("u1", BALANCE, "x") is False  # a failed store is a skipped write, not an exception
    assert dead.retrieve("u1", BALANCE) is None  # fail-open by default


class FakeRuntime:
    def __init__(self, config):
        self.config = config


class FakeRequest:
    def __init__(self, name, args, messages, config):
        self.tool_call = {"name": name, "args": args, "id": "call-1", "type": "tool_call"}
        self.state = {"messages": messages}
        self.runtime = FakeRuntime(config)


def run(cache, name, args, content="result", status="success", human=BALANCE, uid="u1"):
    request = FakeRequest(
        name, args, [HumanMessage("earlier question"), AIMessage("ok"), HumanMessage(human)], user(uid) if uid else {}
    )
    reply = ToolMessage(content=content, tool_call_id="call-1", name=name, status=status)
    assert cache.wrap_tool_call(request, lambda r: reply) is reply


def test_processor_stores_under_latest_human_message(memory):
    cache = IntentionCache(memory)
    run(cache, "get_balance", {"account": "main", "timestamp": "2025-01-01T10:00:00Z"}, content="1000 EUR")
    match = memory.retrieve("u1", BALANCE)
    assert (match.kind, match.tool, match.args, match.result) == (
        "exact",
        "get_balance",
        {"account": "main"},
        "1000 EUR",
    )
    # Same call at another time: the volatile argument is left out, so it replaces instead of adding a memory.
    run(cache, "get_balance", {"account": "main", "timestamp": "2025-01-01T11:00:00Z"}, content="1001 EUR")
    assert len(memory.backend.records("u1", memory.clock())) == 1


def test_processor_prefers_the_intention_argument(memory):
    cache = IntentionCache(memory)
    run(cache, "search_docs", {"intention": "Find the refund policy", "query": "refund"}, content="30 days")
    assert memory.retrieve("u1", "find the refund policy").result == "30 days"
    assert memory.retrieve("u1", BALANCE) is None


@pytest.mark.parametrize(
    ("name", "status", "kwargs"),
    [
        ("get_balance", "error", {}),
        ("send_email", "success", {}),
        ("delete_file", "success", {}),
        ("create_ticket", "success", {}),
        ("update_profile", "success", {}),
        ("write_note", "success", {}),
        ("retrieve_memory", "success", {}),
        ("get_balance", "success", {"deny_tools": ["get_balance"]}),
        ("get_balance", "success", {"allow_tools": ["other"]}),
    ],
)
def test_processor_skips_errors_side_effects_and_denied(memory, name, status, kwargs):
    cache = IntentionCache(memory, **kwargs)
    run(cache, name, {"x": 1}, status=status)
    assert memory.backend.records("u1", memory.clock()) == []


def test_processor_skips_without_user_and_unserialisable(memory):
    cache = IntentionCache(memory)
    run(cache, "get_balance", {}, uid=None)
    assert memory.backend.records("u1", memory.clock()) == []
    request = FakeRequest("get_balance", {"a": object()}, [HumanMessage(BALANCE)], user("u1"))
    reply = ToolMessage(content="x", tool_call_id="call-1")
    assert cache.wrap_tool_call(request, lambda r: reply) is reply  # never breaks the tool call
    assert memory.backend.records("u1", memory.clock()) == []


def test_processor_bad_arguments():
    with pytest.raises(TypeError, match="IntentionMemory"):
        IntentionCache(object())
    with pytest.raises(TypeError, match="deny_tools"):
        IntentionCache(IntentionMemory(), deny_tools=[1])


def make_agent(memory, model, calls):
    @tool
    def lookup_balance(account: str) -> str:
        """Look up the balance of an account."""
        calls.append(account)
        return f"Balance of {account}: 1000 EUR"

    agent = create_agent(
        model,
        tools=[lookup_balance, make_retrieve_memory_tool(memory)],
        middleware=[IntentionCache(memory)],
    )
    return agent


def scripted():
    return ScriptedChatModel(
        replies=[
            AIMessage("", tool_calls=[{"name": "lookup_balance", "args": {"account": "main"}, "id": "t1"}]),
            AIMessage("Your balance is 1000 EUR."),
            AIMessage("", tool_calls=[{"name": "retrieve_memory", "args": {"intention": BALANCE}, "id": "t2"}]),
            AIMessage("Still 1000 EUR."),
        ]
    )


@pytest.mark.parametrize("backend", ["memory", "redis"])
def test_agent_second_turn_uses_retrieve_memory_not_the_tool(backend, request):
    if backend == "redis":
        from promptcache.integrations._redis_intention import RedisIntentionBackend

        b = RedisIntentionBackend(
            url=request.getfixturevalue("redis_url"), prefix=request.getfixturevalue("redis_prefix")
        )
        memory = IntentionMemory(b, ttl_s=600)
    else:
        memory = IntentionMemory(ttl_s=600)
    calls: list[str] = []
    model = scripted()
    agent = make_agent(memory, model, calls)
    first = agent.invoke({"messages": [HumanMessage(BALANCE)]}, config=user("u1"))
    assert first["messages"][-1].content == "Your balance is 1000 EUR."
    assert calls == ["main"]
    second = agent.invoke({"messages": [HumanMessage("what is my account balance")]}, config=user("u1"))
    tool_msgs = [m for m in second["messages"] if isinstance(m, ToolMessage)]
    assert [(m.name, m.content) for m in tool_msgs] == [("retrieve_memory", BALANCE_LISTED)]
    assert calls == ["main"]  # lookup_balance was not called again
    assert model.calls == 4


async def test_agent_async(memory):
    calls: list[str] = []
    agent = make_agent(memory, scripted(), calls)
    await agent.ainvoke({"messages": [HumanMessage(BALANCE)]}, config=user("u1"))
    second = await agent.ainvoke({"messages": [HumanMessage(BALANCE)]}, config=user("u1"))
    assert second["messages"][-2].content == BALANCE_LISTED
    assert calls == ["main"]
    # another user does not see it
    other = await make_retrieve_memory_tool(memory).ainvoke({"intention": BALANCE}, config=user("u2"))
    assert other == MEMORY_NOT_FOUND
