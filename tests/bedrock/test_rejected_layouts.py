"""A caller's own cache points in places Bedrock rejects are refused before anything is sent, with the position:
a point as a message's first block or right after a reasoning block (every model); on Nova, a point in
``toolConfig.tools`` or right after a ``toolResult`` or an image. Layouts Bedrock accepts pass unchanged."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber
from langchain_core.messages import HumanMessage, SystemMessage

from promptcache.cache_points import get_model_info
from promptcache.cache_points._converse import place_cache_points
from promptcache.integrations.bedrock import CachePointChatBedrockConverse

CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"
NOVA = "us.amazon.nova-pro-v1:0"
CP = {"cachePoint": {"type": "default"}}
TEXT = {"text": "What is the weather in Paris?"}
REASONING = {"reasoningContent": {"reasoningText": {"text": "The user wants weather.", "signature": "sig"}}}
TOOL_USE = {"toolUse": {"toolUseId": "t1", "name": "weather", "input": {"city": "Paris"}}}
TOOL_RESULT = {"toolResult": {"toolUseId": "t1", "content": [{"text": "sunny"}]}}
IMAGE = {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}
TOOL = {"toolSpec": {"name": "weather", "description": "Weather.", "inputSchema": {"json": {"type": "object"}}}}


def _turns(*assistant_and_user: list) -> list[dict]:
    messages = [{"role": "user", "content": [TEXT]}]
    for i, content in enumerate(assistant_and_user):
        messages.append({"role": "assistant" if i % 2 == 0 else "user", "content": content})
    return messages


def _place(model_id, messages, tools=None):
    return place_cache_points(get_model_info(model_id), [{"text": "You are terse."}], messages, tools)


@pytest.mark.parametrize("model_id", [CLAUDE, NOVA])
@pytest.mark.parametrize(
    ("messages", "where", "why"),
    [
        ([{"role": "user", "content": [CP, TEXT]}], "messages[0].content[0]", "is the message's first block"),
        ([{"role": "user", "content": [CP, CP, TEXT]}], "messages[0].content[0]", "is the message's first block"),
        (_turns([REASONING, CP, TOOL_USE]), "messages[1].content[1]", "follows a reasoning block"),
    ],
)
def test_refused_on_every_model(model_id, messages, where, why):
    with pytest.raises(ValueError) as info:
        _place(model_id, messages)
    assert f"cachePoint at {where} {why}" in str(info.value)


@pytest.mark.parametrize(
    ("messages", "tools", "where", "why"),
    [
        (_turns([TOOL_USE], [TOOL_RESULT, CP]), None, "messages[2].content[1]", "follows a toolResult block"),
        (_turns([TEXT], [IMAGE, CP, TEXT]), None, "messages[2].content[1]", "follows an image block"),
        (_turns(), [TOOL, CP], "tools[1]", "is in toolConfig.tools"),
    ],
)
def test_refused_on_nova(messages, tools, where, why):
    with pytest.raises(ValueError) as info:
        _place(NOVA, messages, tools)
    message = str(info.value)
    assert f"cachePoint at {where} {why}" in message
    assert "amazon.nova-pro-v1:0" in message
    plan = _place(CLAUDE, messages, tools)  # Claude accepts these: kept as given
    assert plan.manual_points == 1


def test_accepted_layouts_pass():
    messages = _turns([TOOL_USE], [TOOL_RESULT, TEXT, CP])
    assert _place(NOVA, messages).manual_points == 1  # a point after text, on Nova too
    assert _place(CLAUDE, _turns([REASONING, TOOL_USE, CP])).manual_points == 1


def test_wrapper_refuses_before_sending():
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stub = Stubber(client)
    model = CachePointChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1")
    with stub, pytest.raises(ValueError, match=r"cachePoint at messages\[0\]\.content\[0\] is the message's first"):
        model.invoke([HumanMessage(content=[dict(CP), {"type": "text", "text": "hi"}])])
    stub.assert_no_pending_responses()  # nothing was queued, and nothing was sent (Stubber would raise)


@pytest.mark.parametrize("model_id", [CLAUDE, NOVA])
@pytest.mark.parametrize(
    ("system", "messages", "where", "why"),
    [
        ([CP, {"text": "You are terse."}], _turns(), "system[0]", "is the first system block"),
        (
            [{"text": "You are terse."}, CP, CP],
            _turns(),
            "system[2]",
            "directly follows another cachePoint at system[1]",
        ),
        (
            [{"text": "You are terse."}],
            [{"role": "user", "content": [TEXT, CP, CP]}],
            "messages[0].content[2]",
            "directly follows another cachePoint at messages[0].content[1]",
        ),
    ],
)
def test_first_system_block_and_consecutive_points_refused(model_id, system, messages, where, why):
    with pytest.raises(ValueError) as info:
        place_cache_points(get_model_info(model_id), system, messages)
    assert f"cachePoint at {where} {why}" in str(info.value)


def test_a_point_hoisted_out_of_a_tool_result_next_to_the_callers_own_is_refused():
    """The caller's point inside a toolResult moves right after it; with the caller's own point already there, the
    two would sit in a row."""
    messages = _turns([TOOL_USE], [{"toolResult": {"toolUseId": "t1", "content": [TEXT, CP]}}, CP])
    with pytest.raises(ValueError) as info:
        _place(CLAUDE, messages)
    assert "cachePoint at messages[2].content[2] directly follows another cachePoint at messages[2].content[1]" in str(
        info.value
    )


@pytest.mark.parametrize(
    ("tools", "where", "why"),
    [
        ([CP, TOOL], "tools[0]", "is the first entry of toolConfig.tools"),
        ([TOOL, CP, CP], "tools[2]", "directly follows another cachePoint at tools[1]"),
    ],
)
def test_first_tool_and_consecutive_tool_points_refused_on_claude(tools, where, why):
    with pytest.raises(ValueError) as info:
        _place(CLAUDE, _turns(), tools)
    assert f"cachePoint at {where} {why}" in str(info.value)
    assert _place(CLAUDE, _turns(), [TOOL, CP]).manual_points == 1  # after a tool spec: accepted


@pytest.mark.parametrize(
    ("messages", "where"),
    [
        ([SystemMessage(content=[dict(CP), {"type": "text", "text": "s"}]), HumanMessage("hi")], r"system\[0\]"),
        (
            [HumanMessage(content=[{"type": "text", "text": "hi"}, dict(CP), dict(CP)])],
            r"messages\[0\]\.content\[2\] directly follows another cachePoint",
        ),
    ],
    ids=["first-system-block", "two-in-a-row"],
)
def test_wrapper_refuses_these_layouts_before_sending(messages, where):
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stub = Stubber(client)
    model = CachePointChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1")
    with stub, pytest.raises(ValueError, match=r"cachePoint at " + where):
        model.invoke(messages)
    stub.assert_no_pending_responses()  # nothing was queued, and nothing was sent (Stubber would raise)


def test_wrapper_refuses_a_point_as_the_first_tool_before_sending():
    """The hook langchain-aws calls with the final request, given tools that start with a point."""
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stub = Stubber(client)
    model = CachePointChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1")
    params = {"toolConfig": {"tools": [dict(CP), TOOL]}}
    with stub, pytest.raises(ValueError, match=r"cachePoint at tools\[0\] is the first entry of toolConfig.tools"):
        model._apply_cache_points(None, [{"text": "s"}], [{"role": "user", "content": [TEXT]}], params)
    stub.assert_no_pending_responses()


@pytest.mark.parametrize("point", [{"type": "bogus"}, {}, {"type": None, "ttl": "5m"}])
def test_a_cache_point_of_another_type_is_refused_naming_it(point):
    messages = _turns([TEXT], [TEXT, {"cachePoint": point}])
    with pytest.raises(ValueError) as info:
        _place(CLAUDE, messages)
    assert str(info.value) == (
        "cachePoint type at messages[2].content[1] must be 'default' (the only CachePointBlock type in the Bedrock "
        f"Converse API reference), got {point.get('type')!r}"
    )
