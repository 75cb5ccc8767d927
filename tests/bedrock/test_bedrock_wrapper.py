"""CachePointChatBedrockConverse / BedrockCachePoints on a real boto3 bedrock-runtime client with botocore's Stubber.

These tests pin the multi-point layouts (``strategy="multi-point"``); the default anchored-tail strategy has its own
Stubber tests in ``test_bedrock_anchored.py``.

The Stubber validates every request against the Converse API model and ``expected_params`` asserts the exact
request, so each test pins where every ``cachePoint`` block goes. Token counts are injected (one token per word) so
the placements are exact; the model's minimum is lowered to 20 tokens with ``get_model_info(..., overrides)``.
"""

from __future__ import annotations

import asyncio

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
    add_stream_response,
    client_and_stub,
    converse_response,
    count_words,
    get_weather,
    request,
    words,
)

from promptcache.backends import InMemoryServerCache
from promptcache.cache_points import get_model_info
from promptcache.integrations.bedrock import BedrockCachePoints, CachePointChatBedrockConverse, PlacementStore


def converse_history(history, points):
    """Converse messages for ``history`` [(role, text)], with a cache point after the messages in ``points``."""
    out = []
    for i, (role, text) in enumerate(history):
        out.append({"role": role, "content": [{"text": text}] + ([CP] if i in points else [])})
    return out


def lc(history):
    return [HumanMessage(t) if r == "user" else AIMessage(t) for r, t in history]


CLAUDE_TURNS = [
    (words("u0", 30), words("a1", 10), {0}, (0, 55)),
    (words("u2", 15), words("a3", 10), {0, 2}, (55, 35)),
    (words("u4", 5), words("a5", 40), {0, 2}, (90, 0)),
    (words("u6", 10), words("a7", 10), {0, 2, 6}, (90, 65)),
    (words("u8", 25), words("a9", 10), {0, 6, 8}, (155, 35)),
]


def claude_model(client, **kw):
    info = get_model_info(CLAUDE, min_tokens_per_cache_point=20)
    return CachePointChatBedrockConverse(
        model=CLAUDE,
        client=client,
        region_name="us-east-1",
        cache_model_info=info,
        token_counter=count_words,
        strategy="multi-point",
        **kw,
    )


def _call(model, method, messages, config):
    if method == "invoke":
        return model.invoke(messages, config=config)
    if method == "ainvoke":
        return asyncio.run(model.ainvoke(messages, config=config))
    if method == "stream":
        chunks = list(model.stream(messages, config=config))
    else:

        async def collect():
            return [c async for c in model.astream(messages, config=config)]

        chunks = asyncio.run(collect())
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


def run_claude_turns(model, stub, turns, config, method="invoke", history=None):
    history = list(history or [])
    for user, reply, points, (read, write) in turns:
        history.append(("user", user))
        expected = request(CLAUDE, [{"text": SYSTEM}, CP], converse_history(history, points))
        if method in ("stream", "astream"):
            add_stream_response(stub, reply, expected, read=read, write=write)
        else:
            stub.add_response("converse", converse_response(reply, read=read, write=write), expected)
        with stub:
            message = _call(model, method, [SystemMessage(SYSTEM), *lc(history)], config)
        assert message.usage_metadata["input_token_details"] == {"cache_read": read, "cache_creation": write}
        assert message.usage_metadata["input_tokens"] == 10 + read + write  # counted once, as langchain-aws does
        history.append(("assistant", reply))
    return history


@pytest.mark.parametrize("method", ["invoke", "ainvoke", "stream", "astream"])
def test_claude_five_turns_exact_cache_points(method):
    client, stub = client_and_stub()
    model = claude_model(client)
    run_claude_turns(model, stub, CLAUDE_TURNS, {"configurable": {"thread_id": f"claude-{method}"}}, method)
    stub.assert_no_pending_responses()


def test_conversation_without_thread_id_is_keyed_by_system_and_first_message():
    client, stub = client_and_stub()
    run_claude_turns(claude_model(client), stub, CLAUDE_TURNS, None)


@pytest.mark.parametrize("store", ["redis_cache", "redis_cluster_cache"])
def test_two_workers_share_placements_through_redis(store, request):
    redis_cache = request.getfixturevalue(store)  # real Redis, then a real 3-master Redis Cluster
    client, stub = client_and_stub()
    worker_a = claude_model(client, placement_store=redis_cache)
    worker_b = claude_model(client, placement_store=redis_cache)
    config = {"configurable": {"thread_id": "shared-thread"}}
    history = run_claude_turns(worker_a, stub, CLAUDE_TURNS[:3], config)
    # Worker B continues the thread and places exactly what one worker would have: [0, 2, 6], then [0, 6, 8].
    run_claude_turns(worker_b, stub, CLAUDE_TURNS[3:], config, history=history)
    key = PlacementStore.key("thread:shared-thread", "anthropic.claude-sonnet-4-20250514-v1:0")
    assert key.startswith("{thread:shared-thread}:")
    assert redis_cache.namespaced("placements:").get(key) is not None
    assert redis_cache.get(key) is None  # placements are kept apart from the cache's own entries
    # A worker with its own (empty) store would start afresh at turn 4: one point at the last user message only.
    fresh = claude_model(client, placement_store=InMemoryServerCache())
    run_claude_turns(fresh, stub, [(CLAUDE_TURNS[3][0], "r", {6}, (0, 0))], config, history=history)


TOOL_RESULT = {"toolResult": {"toolUseId": "t1", "content": [{"text": TOOL_RESULT_TEXT}], "status": "success"}}


def test_nova_five_turns_with_tools_and_tool_result():
    client, stub = client_and_stub()
    info = get_model_info(NOVA, min_tokens_per_cache_point=20)
    model = CachePointChatBedrockConverse(
        model=NOVA,
        client=client,
        region_name="us-east-1",
        cache_model_info=info,
        token_counter=count_words,
        strategy="multi-point",
    ).bind_tools([get_weather])
    config = {"configurable": {"thread_id": "nova-1"}}
    system = [{"text": SYSTEM}, CP]
    u0, a3, u4, a5, u6, a7, u8 = (
        words("u0", 30),
        words("a3", 10),
        words("u4", 15),
        words("a5", 10),
        words("u6", 30),
        words("a7", 10),
        words("u8", 10),
    )

    def user(text, point):
        return {"role": "user", "content": [{"text": text}] + ([CP] if point else [])}

    def assistant(text):
        return {"role": "assistant", "content": [{"text": text}]}

    # Nova: no point after the tools; none after the tool-result message (turn 2).
    steps = [
        ([user(u0, True)], converse_response([TOOL_USE], stop="tool_use")),
        (
            [user(u0, True), {"role": "assistant", "content": [TOOL_USE]}, {"role": "user", "content": [TOOL_RESULT]}],
            converse_response(a3),
        ),
        (
            [
                user(u0, True),
                {"role": "assistant", "content": [TOOL_USE]},
                {"role": "user", "content": [TOOL_RESULT]},
                assistant(a3),
                user(u4, True),
            ],
            converse_response(a5),
        ),
        (
            [
                user(u0, True),
                {"role": "assistant", "content": [TOOL_USE]},
                {"role": "user", "content": [TOOL_RESULT]},
                assistant(a3),
                user(u4, True),
                assistant(a5),
                user(u6, True),
            ],
            converse_response(a7),
        ),
        # Full (3 message points): 20 new tokens are under 1.2 x the smallest gap (40): unchanged.
        (
            [
                user(u0, True),
                {"role": "assistant", "content": [TOOL_USE]},
                {"role": "user", "content": [TOOL_RESULT]},
                assistant(a3),
                user(u4, True),
                assistant(a5),
                user(u6, True),
                assistant(a7),
                user(u8, False),
            ],
            converse_response("done"),
        ),
    ]
    lc_history = [HumanMessage(u0)]
    extra = [
        None,
        ToolMessage(TOOL_RESULT_TEXT, tool_call_id="t1"),
        HumanMessage(u4),
        HumanMessage(u6),
        HumanMessage(u8),
    ]
    for turn, (expected_messages, response) in enumerate(steps):
        if turn:
            lc_history.append(extra[turn])
        stub.add_response("converse", response, request(NOVA, system, expected_messages, tools=[WEATHER_SPEC]))
        with stub:
            reply = model.invoke([SystemMessage(SYSTEM), *lc_history], config=config)
        lc_history.append(reply)
    stub.assert_no_pending_responses()


def test_claude_tools_point_tool_result_and_reasoning_turn():
    client, stub = client_and_stub()
    info = get_model_info(CLAUDE, min_tokens_per_cache_point=20)
    model = CachePointChatBedrockConverse(
        model=CLAUDE,
        client=client,
        region_name="us-east-1",
        cache_model_info=info,
        token_counter=count_words,
        strategy="multi-point",
    ).bind_tools([get_weather])
    config = {"configurable": {"thread_id": "claude-tools"}}
    reasoning = {"reasoningContent": {"reasoningText": {"text": words("think", 8), "signature": "sig"}}}
    u0, a3, u4 = words("u0", 30), words("a3", 10), words("u4", 50)
    tools = [WEATHER_SPEC, CP]  # the spec alone is over 20 tokens
    system = [{"text": SYSTEM}, CP]
    turn1 = [{"role": "user", "content": [{"text": u0}, CP]}]
    # The point after the tool-result message is a sibling block (allowed on Claude), never inside toolResult;
    # the assistant turn with the reasoning block gets none.
    turn2 = [
        {"role": "user", "content": [{"text": u0}, CP]},
        {"role": "assistant", "content": [reasoning, TOOL_USE]},
        {"role": "user", "content": [TOOL_RESULT, CP]},
    ]
    # Slots: 4 - tools - system = 2, both used; 60 new tokens > 1.2 x 38 (the gap closed by index 2): 2 moves to 4.
    turn3 = [
        {"role": "user", "content": [{"text": u0}, CP]},
        {"role": "assistant", "content": [reasoning, TOOL_USE]},
        {"role": "user", "content": [TOOL_RESULT]},
        {"role": "assistant", "content": [{"text": a3}]},
        {"role": "user", "content": [{"text": u4}, CP]},
    ]
    history = [SystemMessage(SYSTEM), HumanMessage(u0)]
    stub.add_response(
        "converse", converse_response([reasoning, TOOL_USE], stop="tool_use"), request(CLAUDE, system, turn1, tools)
    )
    with stub:
        history.append(model.invoke(history, config=config))
    history.append(ToolMessage(TOOL_RESULT_TEXT, tool_call_id="t1"))
    stub.add_response("converse", converse_response(a3), request(CLAUDE, system, turn2, tools))
    with stub:
        history.append(model.invoke(history, config=config))
    history.append(HumanMessage(u4))
    stub.add_response("converse", converse_response("ok"), request(CLAUDE, system, turn3, tools))
    with stub:
        model.invoke(history, config=config)
    stub.assert_no_pending_responses()
    # The caller's messages never hold cache points.
    assert all("cachePoint" not in str(m.content) for m in history)


def test_manual_points_count_against_the_limit():
    client, stub = client_and_stub()
    model = claude_model(client)
    u0, a1, u2, a3, u4 = (words("u0", 30), words("a1", 10), words("u2", 30), words("a3", 10), words("u4", 30))
    system = SystemMessage(content=[{"type": "text", "text": SYSTEM}, CP])
    four = [
        system,
        HumanMessage(content=[{"type": "text", "text": u0}, CP]),
        AIMessage(a1),
        HumanMessage(content=[{"type": "text", "text": u2}, CP]),
        AIMessage(a3),
        HumanMessage(content=[{"type": "text", "text": u4}, CP]),
    ]
    expected4 = [
        {"role": "user", "content": [{"text": u0}, CP]},
        {"role": "assistant", "content": [{"text": a1}]},
        {"role": "user", "content": [{"text": u2}, CP]},
        {"role": "assistant", "content": [{"text": a3}]},
        {"role": "user", "content": [{"text": u4}, CP]},
    ]
    stub.add_response("converse", converse_response("x"), request(CLAUDE, [{"text": SYSTEM}, CP], expected4))
    with stub:
        model.invoke(four, config={"configurable": {"thread_id": "manual-4"}})
    assert model.last_plan.points_added == 0 and model.last_plan.manual_points == 4
    # Three manual points (system, u0, u2): exactly one is added, after the last user message.
    three = four[:5] + [HumanMessage(u4)]
    stub.add_response("converse", converse_response("x"), request(CLAUDE, [{"text": SYSTEM}, CP], expected4))
    with stub:
        model.invoke(three, config={"configurable": {"thread_id": "manual-3"}})
    assert model.last_plan.points_added == 1 and model.last_plan.manual_points == 3
    stub.assert_no_pending_responses()


def test_ttl_one_hour_only_where_allowed():
    client, stub = client_and_stub()
    with pytest.raises(
        ValueError,
        match=r"cache TTL '1h' is not allowed for model "
        r"'anthropic.claude-sonnet-4-20250514-v1:0'; allowed: \['5m'\]",
    ):
        CachePointChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1", cache_ttl="1h")
    sonnet45 = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    info = get_model_info(sonnet45, min_tokens_per_cache_point=20)
    model = CachePointChatBedrockConverse(
        model=sonnet45,
        client=client,
        region_name="us-east-1",
        cache_model_info=info,
        token_counter=count_words,
        cache_ttl="1h",
        strategy="multi-point",
    )
    hour = {"cachePoint": {"type": "default", "ttl": "1h"}}
    u0 = words("u0", 30)
    stub.add_response(
        "converse",
        converse_response("x"),
        request(sonnet45, [{"text": SYSTEM}, hour], [{"role": "user", "content": [{"text": u0}, hour]}]),
    )
    with stub:
        model.invoke([SystemMessage(SYSTEM), HumanMessage(u0)])
    stub.assert_no_pending_responses()


def test_create_agent_state_holds_no_cache_points():
    from langchain.agents import create_agent
    from langchain_aws import ChatBedrockConverse
    from langgraph.checkpoint.memory import InMemorySaver

    client, stub = client_and_stub()
    base = ChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1")
    processor = BedrockCachePoints(
        cache_model_info=get_model_info(CLAUDE, min_tokens_per_cache_point=20),
        token_counter=count_words,
        strategy="multi-point",
    )
    saver = InMemorySaver()
    agent = create_agent(base, tools=[], system_prompt=SYSTEM, middleware=[processor], checkpointer=saver)
    config = {"configurable": {"thread_id": "agent-1"}}
    history = []
    for user, reply, points, _ in CLAUDE_TURNS[:2]:
        history.append(("user", user))
        stub.add_response(
            "converse",
            converse_response(reply),
            request(CLAUDE, [{"text": SYSTEM}, CP], converse_history(history, points)),
        )
        with stub:
            agent.invoke({"messages": [HumanMessage(user)]}, config=config)
        history.append(("assistant", reply))
    stub.assert_no_pending_responses()
    state = agent.get_state(config).values["messages"]
    assert [m.type for m in state] == ["human", "ai", "human", "ai"]
    assert all("cachePoint" not in str(m.content) for m in state)
    for checkpoint in saver.list(config):
        assert "cachePoint" not in str(checkpoint.checkpoint["channel_values"])


def test_placement_store_fails_open_on_corrupt_entry():
    cache = InMemoryServerCache()
    store = PlacementStore(cache)
    cache.set(store.key("thread:x", "m"), b"not json")
    assert store.load("thread:x", "m") == []
    with pytest.raises(TypeError, match="placement store must be a ServerCache, got dict"):
        PlacementStore({})
