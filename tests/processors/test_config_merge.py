"""``Processor.context(config, **opts)``: per-call options merged into a copy of the caller's config, so they
compose with a checkpointer's ``thread_id``, the ``user_id`` scope and callbacks, and never stick to later calls."""

from __future__ import annotations

import copy

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langgraph.checkpoint.memory import InMemorySaver

from promptcache import InMemoryServerCache, ResponseCache
from promptcache.response_cache import RESPONSE_CACHE_CONTEXT_KEY
from promptcache.testing import ScriptedChatModel

QUESTION = {"messages": [("user", "What is the capital of France?")]}


def _config(thread: str) -> dict:
    return {"configurable": {"thread_id": thread, "user_id": "alice"}}


def _reply(out) -> tuple[str, str | None]:
    message = out["messages"][-1]
    return message.content, message.response_metadata.get("promptcache", {}).get("cache")


def test_bust_on_an_agent_with_a_checkpointer_keeps_thread_and_scope():
    model = ScriptedChatModel(replies=["Paris.", "Paris, France."])
    agent = create_agent(
        model, tools=[], middleware=[ResponseCache(InMemoryServerCache(), ttl_s=600)], checkpointer=InMemorySaver()
    )
    assert _reply(agent.invoke(QUESTION, config=_config("t1"))) == ("Paris.", "miss")
    config = _config("t2")
    given = copy.deepcopy(config)
    busted = ResponseCache.context(config, bust=True)
    assert _reply(agent.invoke(QUESTION, config=busted)) == ("Paris, France.", "bust")  # read skipped, written
    assert config == given  # the caller's config is not modified
    # the bust rewrote alice's entry (user_id kept), so another of her threads reads the new reply
    assert _reply(agent.invoke(QUESTION, config=_config("t3"))) == ("Paris, France.", "hit")
    assert model.calls == 2
    assert agent.get_state(busted).values["messages"][-1].content == "Paris, France."  # checkpointed on t2


def test_merged_copy_keeps_every_other_part_of_the_config():
    handler = BaseCallbackHandler()
    config = {
        "configurable": {"thread_id": "t1", "user_id": "alice", RESPONSE_CACHE_CONTEXT_KEY: {"scope": "team-7"}},
        "callbacks": [handler],
        "tags": ["prod"],
        "recursion_limit": 12,
    }
    given = copy.deepcopy({k: v for k, v in config.items() if k != "callbacks"})
    merged = ResponseCache.context(config, bust=True)
    assert merged["configurable"] == {
        "thread_id": "t1",
        "user_id": "alice",
        RESPONSE_CACHE_CONTEXT_KEY: {"scope": "team-7", "bust": True},
    }
    assert merged["callbacks"] == [handler] and merged["callbacks"][0] is handler
    assert (merged["tags"], merged["recursion_limit"]) == (["prod"], 12)
    assert {k: v for k, v in config.items() if k != "callbacks"} == given
    assert merged is not config and merged["configurable"] is not config["configurable"]


def test_context_without_a_config_still_makes_a_fresh_one():
    assert ResponseCache.context(bust=True) == {"configurable": {RESPONSE_CACHE_CONTEXT_KEY: {"bust": True}}}
    assert ResponseCache.context(None, key="faq") == {"configurable": {RESPONSE_CACHE_CONTEXT_KEY: {"key": "faq"}}}


@pytest.mark.parametrize(
    ("config", "error", "message"),
    [
        ("bust", TypeError, "config must be a RunnableConfig dict"),
        ({"configurable": "x"}, TypeError, r"config\['configurable'\] must be a dict"),
        (_config("t"), ValueError, r"unknown per-call option\(s\) \['bsut'\]"),
    ],
)
def test_bad_merge_is_refused(config, error, message):
    kwargs = {"bsut": True} if error is ValueError else {"bust": True}
    with pytest.raises(error, match=message):
        ResponseCache.context(config, **kwargs)
