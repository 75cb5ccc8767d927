"""Every private API of another package that promptcache relies on (listed in `promptcache._compat`) still behaves
as promptcache expects on the installed versions. A failure names the package and version that changed it."""

from __future__ import annotations

import inspect
from importlib.metadata import version
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph

from promptcache._compat import (
    LANGCHAIN_AWS_CACHE_POINT_HOOK,
    LANGCHAIN_AWS_HOOK_PARAMETERS,
    LLM_STRING_METHODS,
    PREGEL_READ_KEY,
    SERIALIZED_ATTR,
    langchain_llm_string,
)
from promptcache.testing import ScriptedChatModel


def _changed(package: str, what: str) -> str:
    return f"{package} {version(package)} changed {what}: update promptcache._compat and its users"


def test_langchain_llm_string_is_the_string_its_cache_keys_on() -> None:
    seen: list[str] = []

    class Recording(BaseCache):
        def lookup(self, prompt: str, llm_string: str) -> Any:
            seen.append(llm_string)
            return None

        def update(self, prompt: str, llm_string: str, return_val: Any) -> None:
            return None

        def clear(self, **kwargs: Any) -> None:
            return None

    model = ScriptedChatModel(replies=["x"], cache=Recording())
    for name in LLM_STRING_METHODS:
        assert hasattr(BaseChatModel, name) or name == "asdict", _changed("langchain-core", f"BaseChatModel.{name}")
    model.invoke("hi")
    assert seen == [langchain_llm_string(model)], _changed("langchain-core", "the string BaseCache keys on")


def test_langchain_caches_the_serialized_form_under_the_known_attribute() -> None:
    model = ScriptedChatModel(replies=["x"])
    model.invoke("hi")  # the cached serialised form appears on first use
    state = vars(model)
    assert SERIALIZED_ATTR in state or all(not k.startswith("_ser") for k in state), _changed(
        "langchain-core", "the attribute holding a model's cached serialised form"
    )


def test_langgraph_gives_a_running_node_its_channel_reader() -> None:
    seen: dict[str, Any] = {}

    def node(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        read = config["configurable"].get(PREGEL_READ_KEY)
        seen["callable"] = callable(read)
        seen["messages"] = len(read("messages", False)) if callable(read) else None
        return {"messages": [AIMessage("ok")]}

    graph = StateGraph(MessagesState)
    graph.add_node("n", node)
    graph.add_edge(START, "n")
    graph.add_edge("n", END)
    graph.compile().invoke({"messages": [("user", "hi")]})
    assert seen == {"callable": True, "messages": 1}, _changed("langgraph", f"configurable[{PREGEL_READ_KEY!r}]")


def test_langchain_aws_hook_has_the_signature_the_wrapper_overrides() -> None:
    from langchain_aws import ChatBedrockConverse

    hook = getattr(ChatBedrockConverse, LANGCHAIN_AWS_CACHE_POINT_HOOK, None)
    assert callable(hook), _changed("langchain-aws", f"ChatBedrockConverse.{LANGCHAIN_AWS_CACHE_POINT_HOOK}")
    params = tuple(inspect.signature(hook).parameters)
    assert params == LANGCHAIN_AWS_HOOK_PARAMETERS, _changed("langchain-aws", f"its parameters to {params}")
