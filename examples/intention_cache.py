"""Intention cache, offline: an agent answers a repeated question from memory instead of calling the tool again.

Turn 1 calls the ``get_weather`` tool; ``IntentionCache`` stores its result under the user's intention. Turn 2 (a
new conversation, same user, the question worded differently) gets the result through ``retrieve_memory``, and the
tool is not called again. The chat model is scripted (``ScriptedChatModel``), so no keys or network are needed.

    python examples/intention_cache.py            # in-memory backend
    python examples/intention_cache.py --redis redis://127.0.0.1:6379/0    # the Redis backend at this URL
"""

from __future__ import annotations

import os

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from promptcache import IntentionCache, IntentionMemory, make_retrieve_memory_tool
from promptcache.testing import ScriptedChatModel

tool_calls: list[str] = []


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    tool_calls.append(city)
    return f"{city}: 21 C, sunny"


def main(redis_url: str | None = None) -> None:
    backend = None
    if redis_url:
        from promptcache.integrations.redis import RedisIntentionBackend

        backend = RedisIntentionBackend(
            url=redis_url,
            prefix=os.environ.get("PROMPTCACHE_PREFIX", "promptcache-example:"),
        )
    memory = IntentionMemory(backend, ttl_s=600)
    model = ScriptedChatModel(
        replies=[
            AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call-1"}]),
            AIMessage("It is 21 C and sunny in Paris."),
            AIMessage(
                "",
                tool_calls=[
                    {
                        "name": "retrieve_memory",
                        "args": {"intention": "What's the weather like in Paris today?"},
                        "id": "call-2",
                    }
                ],
            ),
            AIMessage("Still 21 C and sunny in Paris."),
        ]
    )
    agent = create_agent(
        model,
        tools=[get_weather, make_retrieve_memory_tool(memory)],
        middleware=[IntentionCache(memory)],
        system_prompt="Before calling a tool, try retrieve_memory with the user's intention.",
    )
    config = {"configurable": {"user_id": "alice"}}  # the user id comes from the config, never from the model

    for turn, question in enumerate(["What is the weather in Paris today?", "what's the weather like in Paris today"]):
        state = agent.invoke({"messages": [HumanMessage(question)]}, config=config)
        print(f"turn {turn + 1}: {question!r}")
        for message in state["messages"]:
            if isinstance(message, ToolMessage):
                print(f"  tool {message.name} -> {message.content!r}")
        print(f"  answer: {state['messages'][-1].content}")
    print(f"get_weather calls: {len(tool_calls)}; model calls: {model.calls}")

    match = memory.retrieve("bob", "What is the weather in Paris today?")
    print(f"bob's lookup: {match}")
    if redis_url:
        memory.forget("alice")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--redis", metavar="URL", help="use RedisIntentionBackend at this URL instead of the in-memory one"
    )
    main(redis_url=parser.parse_args().redis)
