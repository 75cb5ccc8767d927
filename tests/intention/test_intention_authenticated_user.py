"""With an authenticated user (``configurable["langgraph_auth_user_id"]``), no per-call input reaches another
user's intention memories: ``retrieve_memory`` and ``IntentionCache`` refuse a differing ``user_id``."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from promptcache.intention import IntentionCache, IntentionMemory, make_retrieve_memory_tool
from promptcache.intention._tool import MEMORY_NOT_FOUND
from promptcache.testing import ScriptedChatModel


def _auth(user: str, **configurable) -> dict:
    return {"configurable": {"langgraph_auth_user_id": user, **configurable}}


@pytest.fixture
def memory() -> IntentionMemory:
    memory = IntentionMemory(ttl_s=600)
    memory.store("alice", "my account balance", "1,200 EUR", tool="get_balance", args={})
    return memory


def test_retrieve_memory_refuses_another_users_id(memory):
    retrieve = make_retrieve_memory_tool(memory)
    with pytest.raises(PermissionError, match="'alice'.*'bob'"):
        retrieve.invoke({"intention": "my account balance"}, config=_auth("bob", user_id="alice"))
    assert retrieve.invoke({"intention": "my account balance"}, config=_auth("bob")) == MEMORY_NOT_FOUND
    assert "1,200 EUR" in retrieve.invoke({"intention": "my account balance"}, config=_auth("alice", user_id="alice"))


async def test_async_retrieve_memory_refuses_another_users_id(memory):
    retrieve = make_retrieve_memory_tool(memory)
    with pytest.raises(PermissionError, match="'alice'"):
        await retrieve.ainvoke({"intention": "my account balance"}, config=_auth("bob", user_id="alice"))


def test_retrieve_memory_opting_in_trusts_the_config(memory):
    retrieve = make_retrieve_memory_tool(memory, allow_scope_override=True)
    assert "1,200 EUR" in retrieve.invoke({"intention": "my account balance"}, config=_auth("bob", user_id="alice"))


def test_intention_cache_never_serves_another_users_result(memory):
    ran: list[str] = []

    @tool
    def get_balance() -> str:
        """The user's account balance."""
        ran.append("get_balance")
        return "15 EUR"

    call = AIMessage("", tool_calls=[{"name": "get_balance", "args": {}, "id": "c1"}])
    model = ScriptedChatModel(replies=[call, call, "done"])  # the refused run ends at its tool call
    agent = create_agent(model, tools=[get_balance], middleware=[IntentionCache(memory, serve_repeats=True)])
    ask = {"messages": [HumanMessage("my account balance")]}
    with pytest.raises(PermissionError, match="'alice'.*'bob'"):
        agent.invoke(ask, config=_auth("bob", user_id="alice"))
    assert ran == []  # refused before the tool ran or the memory was read
    result = agent.invoke(ask, config=_auth("bob"))
    assert ran == ["get_balance"]  # bob's own call runs: alice's stored result is not his
    assert "15 EUR" in [m.content for m in result["messages"]]


def test_an_empty_user_id_is_an_error(memory):
    retrieve = make_retrieve_memory_tool(memory)
    with pytest.raises(ValueError, match=r"configurable\['user_id'\].*''"):
        retrieve.invoke({"intention": "my account balance"}, config={"configurable": {"user_id": ""}})
