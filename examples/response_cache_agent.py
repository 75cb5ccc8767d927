"""ResponseCache in a create_agent tool loop, offline (a scripted fake model; no keys, no network).

Run: python examples/response_cache_agent.py [--redis redis://127.0.0.1:6379/0]   (--redis needs the redis extra:
pip install -e ".[redis]")

Prints one line per model call: hit or miss, the step number and the tokens billed.
"""

from __future__ import annotations

import argparse

from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from promptcache import InMemoryServerCache, Processor, ResponseCache
from promptcache.testing import ScriptedChatModel


def step_number(messages: list[object]) -> int:
    """The agent step within the current turn: AI messages after the last human message."""
    count = 0
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            break
        count += isinstance(message, AIMessage)
    return count


@tool
def population(city: str) -> str:
    """Population of a city (millions)."""
    return {"Paris": "2.1", "Lyon": "0.5"}.get(city, "unknown")


class PrintCalls(Processor):
    """Outermost processor: prints what the cache did for each model call."""

    def process_response(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        ai = next(m for m in response.result if isinstance(m, AIMessage))
        info = ai.response_metadata.get("promptcache", {})
        billed = (ai.usage_metadata or {}).get("total_tokens", 0)
        print(f"  step {step_number(request.messages)}: {info.get('cache', '-'):4}  billed tokens: {billed}")
        return response


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--redis", help="use RedisCache at this URL instead of the in-memory cache")
    args = parser.parse_args()
    if args.redis:
        from promptcache.integrations.redis import RedisCache

        cache = RedisCache(url=args.redis, prefix="promptcache-example:")
        cache.clear()
    else:
        cache = InMemoryServerCache()

    ask_tool = AIMessage("", tool_calls=[{"name": "population", "args": {"city": "Paris"}, "id": "call_1"}])
    model = ScriptedChatModel(replies=[ask_tool, "Paris has about 2.1 million people.", "Paris (fresh).", "Bonjour!"])
    agent = create_agent(
        model,
        tools=[population],
        system_prompt="You answer questions concisely.",
        middleware=[PrintCalls(), ResponseCache(cache, ttl_s=600)],
    )
    question = {"messages": [HumanMessage("How many people live in Paris?")]}
    runs = [
        ("first call (model runs)", question, None),
        ("same question again (from the cache)", question, None),
        (
            "bust=True (model runs, entry refreshed)",
            {"messages": [HumanMessage("How many people live in Paris?")]},
            ResponseCache.context(bust=True),
        ),
        ("another user (own scope)", {"messages": [HumanMessage("Hello")]}, {"configurable": {"user_id": "u-2"}}),
    ]
    for title, inp, config in runs:
        print(title)
        answer = agent.invoke(inp, config=config)["messages"][-1]
        print(f"  -> {answer.content}")
    print(f"model calls: {model.calls}")
    if args.redis:
        cache.clear()  # leave nothing behind on a shared server
        cache.close()


if __name__ == "__main__":
    main()
