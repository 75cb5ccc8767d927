"""A real boto3 bedrock-runtime client with botocore's Stubber, Converse replies, and the conversations the Bedrock tests share."""

from __future__ import annotations

import boto3
from botocore.stub import Stubber
from langchain_core.tools import tool

CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"


NOVA = "us.amazon.nova-pro-v1:0"


CP = {"cachePoint": {"type": "default"}}


def words(tag: str, n: int) -> str:
    return " ".join([tag] + ["w"] * (n - 1))


def count_words(message) -> int:
    """One token per word of text / tool-result text / reasoning text; 5 per tool call."""
    content = message["content"]
    if isinstance(content, str):
        return len(content.split())
    total = 0
    for block in content:
        if "text" in block:
            total += len(block["text"].split())
        elif "toolUse" in block:
            total += 5
        elif "toolResult" in block:
            total += sum(len(b.get("text", "").split()) for b in block["toolResult"]["content"])
        elif "reasoningContent" in block:
            total += len(block["reasoningContent"]["reasoningText"]["text"].split())
    return total


SYSTEM = words("sys", 25)


def client_and_stub():
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    return client, Stubber(client)


def converse_response(content, read=0, write=0, fresh=10, out=3, stop="end_turn"):
    if isinstance(content, str):
        content = [{"text": content}]
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {
            "inputTokens": fresh,
            "outputTokens": out,
            "totalTokens": fresh + read + write + out,
            "cacheReadInputTokens": read,
            "cacheWriteInputTokens": write,
        },
        "metrics": {"latencyMs": 5},
    }


class _EventStream(dict):
    """botocore's Stubber validates a stream response as a plain structure (one union member set); the real client
    hands back an iterable EventStream. This dict holds the first event for validation, then iterates all events."""

    armed = False

    def __init__(self, events):
        super().__init__(events[0])
        self.events = events

    def __iter__(self):
        return iter(self.events) if self.armed else super().__iter__()

    def close(self):
        pass


def add_stream_response(stub, text, expected, read=0, write=0, fresh=10, out=3):
    events = _EventStream(
        [
            {"messageStart": {"role": "assistant"}},
            {"contentBlockDelta": {"delta": {"text": text}, "contentBlockIndex": 0}},
            {"contentBlockStop": {"contentBlockIndex": 0}},
            {"messageStop": {"stopReason": "end_turn"}},
            {
                "metadata": {
                    "usage": {
                        "inputTokens": fresh,
                        "outputTokens": out,
                        "totalTokens": fresh + read + write + out,
                        "cacheReadInputTokens": read,
                        "cacheWriteInputTokens": write,
                    },
                    "metrics": {"latencyMs": 1},
                }
            },
        ]
    )
    stub.add_response("converse_stream", {"stream": events}, expected)
    events.armed = True


def request(model_id, system, messages, tools=None):
    params = {"modelId": model_id, "messages": messages, "system": system, "inferenceConfig": {}}
    if tools is not None:
        params["toolConfig"] = {"tools": tools}
    return params


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city: temperature in degrees Celsius, wind, and a short sky description."""
    return "sunny"


WEATHER_SPEC = {
    "toolSpec": {
        "name": "get_weather",
        "description": get_weather.description,
        "inputSchema": {"json": {"properties": {"city": {"type": "string"}}, "required": ["city"], "type": "object"}},
    }
}


TOOL_USE = {"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {"city": "Paris"}}}


TOOL_RESULT_TEXT = words("sunny", 15)
