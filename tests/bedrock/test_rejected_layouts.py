"""A caller's own cache points in places Bedrock rejects are refused before anything is sent, with the position:
a point as a message's first block or right after a reasoning block (every model); on Nova, a point in
``toolConfig.tools`` or right after a ``toolResult`` or an image. Layouts Bedrock accepts pass unchanged."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber
from langchain_core.messages import HumanMessage

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
