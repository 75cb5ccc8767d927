"""The default anchored-tail strategy through CachePointChatBedrockConverse / BedrockCachePoints, on a real boto3
bedrock-runtime client with botocore's Stubber (each request validated against the Converse model and asserted
exactly). Token counts are injected (one per word, 5 per tool call); the minimum is lowered to 20 tokens."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from support.bedrock import (
    CLAUDE,
    CP,
    NOVA,
    SYSTEM,
    TOOL_RESULT_TEXT,
    TOOL_USE,
    WEATHER_SPEC,
    client_and_stub,
    converse_response,
    count_words,
    get_weather,
    request,
    words,
)

from promptcache.cache_points import AnchoredTailStrategy, MultiPointStrategy, get_model_info
from promptcache.integrations.bedrock import BedrockCachePoints, CachePointChatBedrockConverse


def make_model(client, model_id, **kw):
    info = get_model_info(model_id, min_tokens_per_cache_point=20)
    return CachePointChatBedrockConverse(
        model=model_id, client=client, region_name="us-east-1", cache_model_info=info, token_counter=count_words, **kw
    )


def user(text):
    return {"role": "user", "content": [{"text": text}]}


def assistant(text):
    return {"role": "assistant", "content": [{"text": text}]}


def tool_use(i):
    return {"toolUse": {"toolUseId": f"p{i}", "name": "get_weather", "input": {"city": f"c{i}"}}}


def tool_result(i):
    return {"toolResult": {"toolUseId": f"p{i}", "content": [{"text": "ok"}], "status": "success"}}


def mark(messages, points):
    """A copy of Converse ``messages`` with a cache point appended to the messages in ``points``."""
    return [{**m, "content": m["content"] + ([CP] if i in points else [])} for i, m in enumerate(messages)]


def run_turns(model, stub, steps, config, model_id):
    """steps: (new LangChain messages, expected Converse messages without points, points, reply content)."""
    history = [SystemMessage(SYSTEM)]
    for new, converse, points, reply in steps:
        history += new
        stop = "tool_use" if any("toolUse" in b for b in reply) else "end_turn"
        stub.add_response(
            "converse",
            converse_response(reply, stop=stop),
            request(model_id, [{"text": SYSTEM}, CP], mark(converse, points), tools=[WEATHER_SPEC]),
        )
        with stub:
            history.append(model.invoke(history, config=config))
    stub.assert_no_pending_responses()
    assert all("cachePoint" not in str(m.content) for m in history)
    return history


def test_default_strategy_is_anchored_tail():
    client, _ = client_and_stub()
    assert make_model(client, CLAUDE)._strategy is AnchoredTailStrategy
    assert make_model(client, CLAUDE, strategy="multi-point")._strategy is MultiPointStrategy
    with pytest.raises(ValueError, match="unknown cache-point strategy 'last'; known: 'anchored-tail', 'multi-point'"):
        make_model(client, CLAUDE, strategy="last")
    with pytest.raises(TypeError, match="strategy must be 'anchored-tail', 'multi-point' or a CacheStrategy subclass"):
        BedrockCachePoints(strategy=42)


def test_strategy_name_lists_every_named_strategy():
    from typing import get_args

    from promptcache.integrations._bedrock_options import STRATEGIES
    from promptcache.integrations.bedrock import StrategyName

    assert get_args(StrategyName) == ("anchored-tail", "multi-point")
    assert tuple(STRATEGIES) == get_args(StrategyName)


def test_claude_five_turns_tool_loop_and_bridge():
    client, stub = client_and_stub()
    model = make_model(client, CLAUDE).bind_tools([get_weather])
    u0, a3, u4, a5, u6 = words("u0", 30), words("a3", 10), words("u4", 15), words("a5", 10), words("u6", 10)
    fan = [tool_use(i) for i in range(11)]  # 11 parallel calls: 22 blocks after the previous tail
    base = [user(u0)]
    loop = base + [
        {"role": "assistant", "content": [TOOL_USE]},
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "t1", "content": [{"text": TOOL_RESULT_TEXT}], "status": "success"}}
            ],
        },
    ]
    t3 = loop + [assistant(a3), user(u4)]
    t4 = t3 + [assistant(a5), user(u6)]
    t5 = t4 + [{"role": "assistant", "content": fan}, {"role": "user", "content": [tool_result(i) for i in range(11)]}]
    steps = [
        # Anchor after the system prompt (it covers the tools too: no tools point); tail on the only message.
        ([HumanMessage(u0)], base, {0}, [TOOL_USE]),
        # Tool-result turn: the tail follows the toolResult message (a sibling block, allowed on Claude); the
        # spare slot takes the toolUse message; the previous tail (0) is 2 blocks back, read by the lookback.
        ([ToolMessage(TOOL_RESULT_TEXT, tool_call_id="t1")], loop, {1, 2}, [{"text": a3}]),
        ([HumanMessage(u4)], t3, {3, 4}, [{"text": a5}]),
        ([HumanMessage(u6)], t4, {5, 6}, fan),
        # 22 new blocks: a bridge at the previous tail (6) + the tail (8) + the spare (7) + the anchor = 4 points.
        ([ToolMessage("ok", tool_call_id=f"p{i}") for i in range(11)], t5, {6, 7, 8}, [{"text": "done"}]),
    ]
    run_turns(model, stub, steps, {"configurable": {"thread_id": "anchored-claude"}}, CLAUDE)


def test_nova_five_turns_tail_moves_back_from_tool_results():
    client, stub = client_and_stub()
    model = make_model(client, NOVA).bind_tools([get_weather])
    u0, a3, u4, a5, u6, a7, u8 = (
        words("u0", 30),
        words("a3", 10),
        words("u4", 15),
        words("a5", 10),
        words("u6", 30),
        words("a7", 10),
        words("u8", 10),
    )
    result = {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": TOOL_RESULT_TEXT}], "status": "success"}}],
    }
    t2 = [user(u0), {"role": "assistant", "content": [TOOL_USE]}, result]
    t3 = t2 + [assistant(a3), user(u4)]
    t4 = t3 + [assistant(a5), user(u6)]
    t5 = t4 + [assistant(a7), user(u8)]
    steps = [
        ([HumanMessage(u0)], t2[:1], {0}, [TOOL_USE]),
        # Nova: no point after the toolResult; the tail goes after the assistant's toolUse (never a tools point).
        ([ToolMessage(TOOL_RESULT_TEXT, tool_call_id="t1")], t2, {1}, [{"text": a3}]),
        # The spare slot skips the toolResult message (2) and stops at the previous tail (1).
        ([HumanMessage(u4)], t3, {3, 4}, [{"text": a5}]),
        ([HumanMessage(u6)], t4, {5, 6}, [{"text": a7}]),
        ([HumanMessage(u8)], t5, {7, 8}, [{"text": "done"}]),
    ]
    run_turns(model, stub, steps, {"configurable": {"thread_id": "anchored-nova"}}, NOVA)


def test_processor_default_places_anchored_tail_in_an_agent():
    from langchain.agents import create_agent
    from langchain_aws import ChatBedrockConverse

    client, stub = client_and_stub()
    base = ChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1")
    processor = BedrockCachePoints(
        cache_model_info=get_model_info(CLAUDE, min_tokens_per_cache_point=20), token_counter=count_words
    )
    agent = create_agent(base, tools=[], system_prompt=SYSTEM, middleware=[processor])
    u0, a1, u2 = words("u0", 30), words("a1", 10), words("u2", 15)
    stub.add_response("converse", converse_response(a1), request(CLAUDE, [{"text": SYSTEM}, CP], mark([user(u0)], {0})))
    stub.add_response(
        "converse",
        converse_response("fine"),
        request(CLAUDE, [{"text": SYSTEM}, CP], mark([user(u0), assistant(a1), user(u2)], {1, 2})),
    )
    with stub:
        state = agent.invoke({"messages": [HumanMessage(u0)]})
        agent.invoke({"messages": [*state["messages"], HumanMessage(u2)]})
    stub.assert_no_pending_responses()
    assert isinstance(state["messages"][-1], AIMessage)
