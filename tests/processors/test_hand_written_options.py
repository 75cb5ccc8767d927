"""Per-call options written by hand into ``configurable[<context key>]`` are checked like ``context()`` checks
them: a misspelt name, a value of the wrong type, or options that are not a dict are a clear error, not ignored."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore

from promptcache import InMemoryServerCache, ResponseCache, with_processors
from promptcache.integrations.langgraph import MemoryNode
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore
from promptcache.response_cache import RESPONSE_CACHE_CONTEXT_KEY
from promptcache.testing import ScriptedChatModel

MEMORY_KEY = "promptcache.memory"


def _config(key: str, options: object) -> dict:
    return {"configurable": {"user_id": "alice", key: options}}


def test_context_refuses_the_misspelt_name():  # what the hand-written form must match
    with pytest.raises(ValueError, match=r"unknown per-call option\(s\) \['bsut'\]"):
        ResponseCache.context(bsut=True)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"bsut": True}, ValueError, r"unknown per-call option\(s\) \['bsut'\] for 'promptcache.response_cache'"),
        ({"bust": "yes"}, TypeError, "per-call bust must be a bool, got str: 'yes'"),
        ({"key": 7}, TypeError, "per-call key must be a str or a callable"),
        ("bust", TypeError, r"configurable\['promptcache.response_cache'\] must be a dict of per-call options"),
    ],
)
def test_response_cache_refuses_bad_hand_written_options(options, error, message):
    model = ScriptedChatModel(replies=["one", "two"])
    cache = InMemoryServerCache()
    wrapped = with_processors(model, [ResponseCache(cache)])
    with pytest.raises(error, match=message):
        wrapped.invoke("hi", config=_config(RESPONSE_CACHE_CONTEXT_KEY, options))
    assert (model.calls, len(cache)) == (0, 0)  # refused before the model is called or anything is written


def test_response_cache_refuses_a_misspelt_option_inside_an_agent():
    model = ScriptedChatModel(replies=["one"])
    agent = create_agent(model, tools=[], middleware=[ResponseCache(InMemoryServerCache())])
    with pytest.raises(ValueError, match=r"unknown per-call option\(s\) \['bsut'\]"):
        agent.invoke({"messages": [("user", "hi")]}, config=_config(RESPONSE_CACHE_CONTEXT_KEY, {"bsut": True}))
    assert model.calls == 0


def test_hand_written_options_that_context_would_make_still_work():
    model = ScriptedChatModel(replies=["one", "two"])
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    wrapped.invoke("hi", config=_config(RESPONSE_CACHE_CONTEXT_KEY, {"bust": False}))
    reply = wrapped.invoke("hi", config=_config(RESPONSE_CACHE_CONTEXT_KEY, {"bust": True}))
    assert (reply.content, model.calls) == ("two", 2)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"scpoe": "bob"}, ValueError, r"unknown per-call option\(s\) \['scpoe'\] for 'promptcache.memory'"),
        ({"scope": 4.5}, TypeError, "per-call scope must be a string or None, got float: 4.5"),
        (["scope"], TypeError, r"configurable\['promptcache.memory'\] must be a dict of per-call options"),
    ],
)
def test_memory_refuses_bad_hand_written_options(options, error, message):
    memory = TypedMemoryStore(InMemoryStore())
    with pytest.raises(error, match=message):
        MemoryNode(memory).invoke({"messages": [HumanMessage("hi")]}, _config(MEMORY_KEY, options))
    with pytest.raises(error, match=message):
        TypedMemoryMiddleware(memory).call_options(_config(MEMORY_KEY, options))
