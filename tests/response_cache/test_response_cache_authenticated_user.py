"""With an authenticated user (``configurable["langgraph_auth_user_id"]``, set by LangGraph Platform from the
request's credentials), no per-call input reaches another user's cached replies: a differing ``user_id`` or
per-call ``scope`` is refused before the cache is read, unless the constructor opts in."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from promptcache import InMemoryServerCache, ResponseCache, with_processors
from promptcache.testing import ScriptedChatModel


def _auth(user: str, **configurable) -> dict:
    return {"configurable": {"langgraph_auth_user_id": user, **configurable}}


def _asks() -> list:
    return [HumanMessage("what is my account balance?")]


def test_an_authenticated_caller_cannot_name_another_users_scope():
    model = ScriptedChatModel(replies=["alice: 1,200 EUR", "bob: 15 EUR"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    assert wrapped.invoke(_asks(), config=_auth("alice")).content == "alice: 1,200 EUR"
    spoofs = [
        _auth("bob", user_id="alice"),
        ResponseCache.context(_auth("bob"), scope="alice"),
        ResponseCache.context(_auth("bob"), scope=None),  # the entries shared by every user
        ResponseCache.context(_auth("bob", user_id="bob"), scope="alice"),
    ]
    for config in spoofs:
        with pytest.raises(PermissionError, match="differs from the authenticated user .*'bob'"):
            wrapped.invoke(_asks(), config=config)
    assert model.calls == 1  # refused before the cache or the model was reached
    assert wrapped.invoke(_asks(), config=_auth("bob", user_id="bob")).content == "bob: 15 EUR"  # bob's own scope
    alice = wrapped.invoke(_asks(), config=ResponseCache.context(_auth("alice"), scope="alice"))
    assert (alice.content, alice.response_metadata["promptcache"]["cache"]) == ("alice: 1,200 EUR", "hit")


async def test_async_calls_refuse_the_same_spoof():
    model = ScriptedChatModel(replies=["alice: 1,200 EUR"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    await wrapped.ainvoke(_asks(), config=_auth("alice"))
    with pytest.raises(PermissionError, match="'alice'"):
        await wrapped.ainvoke(_asks(), config=_auth("bob", user_id="alice"))
    assert model.calls == 1


def test_a_constructor_that_opts_in_trusts_the_configs_scope():
    cache = InMemoryServerCache()
    model = ScriptedChatModel(replies=["team answer"])
    trusted = with_processors(model, [ResponseCache(cache, allow_scope_override=True)])
    trusted.invoke(_asks(), config={"configurable": {"user_id": "team-7"}})
    hit = trusted.invoke(_asks(), config=_auth("bob", user_id="team-7"))
    assert (hit.content, hit.response_metadata["promptcache"]["cache"]) == ("team answer", "hit")


def test_a_fixed_constructor_scope_is_the_deployers_and_is_kept():
    model = ScriptedChatModel(replies=["shared FAQ answer"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache(), scope=None)])
    wrapped.invoke(_asks(), config=_auth("alice"))
    hit = wrapped.invoke(_asks(), config=_auth("bob"))
    assert hit.response_metadata["promptcache"]["cache"] == "hit"


def test_an_empty_user_id_is_an_error_and_an_empty_auth_id_is_no_user():
    model = ScriptedChatModel(replies=["a", "b"], cycle=True)
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    with pytest.raises(ValueError, match=r"configurable\['user_id'\].*''"):
        wrapped.invoke(_asks(), config={"configurable": {"user_id": ""}})
    assert model.calls == 0
    # LangGraph Platform without an auth handler sends langgraph_auth_user_id="": no authenticated user
    wrapped.invoke(_asks(), config={"configurable": {"user_id": "carol", "langgraph_auth_user_id": ""}})
    hit = wrapped.invoke(_asks(), config={"configurable": {"user_id": "carol"}})
    assert hit.response_metadata["promptcache"]["cache"] == "hit"
