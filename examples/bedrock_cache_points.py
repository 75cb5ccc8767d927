"""Bedrock cache points on a growing conversation: where the points go, and what the cache reports.

Offline by default: a real boto3 ``bedrock-runtime`` client with botocore's Stubber (no AWS keys, no network),
answering with made-up usage figures. With AWS credentials and ``PROMPTCACHE_BEDROCK_MODEL`` set (e.g.
``us.anthropic.claude-sonnet-4-20250514-v1:0``) it talks to real Bedrock instead. The placement strategy is the
default ``anchored-tail``; set ``PROMPTCACHE_CACHE_STRATEGY=multi-point`` to see Roo-Code's strategy instead.

    pip install -e ".[bedrock]"   # boto3 and langchain-aws
    python examples/bedrock_cache_points.py
"""

from __future__ import annotations

import os

import boto3
from langchain_core.messages import HumanMessage, SystemMessage

from promptcache.integrations.bedrock import CachePointChatBedrockConverse

# A system prompt and questions long enough to pass the 1,024-token minimum of Claude Sonnet 4.
SYSTEM = "You are a patient tutor for machine learning. " + " ".join(
    f"Rule {i}: explain with a concrete example, define every term, and check the learner's understanding."
    for i in range(80)
)
QUESTIONS = [
    "Tell me about machine learning. " + "Please be thorough and cover the history and main ideas. " * 100,
    "What about deep learning? " + "Compare it with classical methods in detail. " * 20,
    "How do neural networks work? " + "Walk through a forward pass step by step with numbers. " * 120,
    "Can you explain backpropagation? " + "Use the chain rule explicitly for a two-layer network. " * 120,
]


def _offline_client(model_id: str):
    from botocore.stub import ANY, Stubber

    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stub = Stubber(client)
    cached = 0
    for turn in range(len(QUESTIONS)):
        written = 1_200 + 700 * turn
        usage = {
            "inputTokens": 40,
            "outputTokens": 120,
            "cacheReadInputTokens": cached,
            "cacheWriteInputTokens": written,
            "totalTokens": 40 + 120 + cached + written,
        }
        cached += written
        reply = {
            "output": {
                "message": {
                    "role": "assistant",
                    "content": [{"text": f"(offline reply {turn + 1}) " + "An explanation with examples. " * 60}],
                }
            },
            "stopReason": "end_turn",
            "usage": usage,
            "metrics": {"latencyMs": 300},
        }
        stub.add_response(
            "converse", reply, {"modelId": model_id, "messages": ANY, "system": ANY, "inferenceConfig": ANY}
        )
    stub.activate()
    return client


def main() -> None:
    live_model = os.environ.get("PROMPTCACHE_BEDROCK_MODEL")
    live = bool(live_model) and boto3.Session().get_credentials() is not None
    model_id = live_model if live else "us.anthropic.claude-sonnet-4-20250514-v1:0"
    client = boto3.client("bedrock-runtime") if live else _offline_client(model_id)
    strategy = os.environ.get("PROMPTCACHE_CACHE_STRATEGY", "anchored-tail")
    model = CachePointChatBedrockConverse(
        model=model_id, client=client, region_name=client.meta.region_name, strategy=strategy
    )
    info = model.cache_model
    print(
        f"{'live Bedrock' if live else 'offline (Stubber)'}: {model_id} -> {info.model_id}, "
        f"min {info.min_tokens_per_cache_point} tokens/point, max {info.max_cache_points} points, "
        f"strategy {strategy}"
    )
    print(f"{'turn':>4}  {'system':>6}  {'message points (index:tokens)':<34} {'cache read':>10} {'cache write':>11}")
    config = {"configurable": {"thread_id": "example-thread"}}
    history = [SystemMessage(SYSTEM)]
    for turn, question in enumerate(QUESTIONS, start=1):
        history.append(HumanMessage(question))
        reply = model.invoke(history, config=config)
        history.append(reply)
        plan = model.last_plan
        points = ", ".join(f"{p.index}:{p.tokens_covered}" for p in plan.placements) or "-"
        details = (reply.usage_metadata or {}).get("input_token_details", {})
        print(
            f"{turn:>4}  {'yes' if plan.system_point else 'no':>6}  {points:<34} "
            f"{details.get('cache_read', 0):>10} {details.get('cache_creation', 0):>11}"
        )
    assert not any("cachePoint" in str(m.content) for m in history), "cache points leaked into the history"
    print("history holds no cachePoint blocks (they exist only on the request sent to Bedrock)")


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
