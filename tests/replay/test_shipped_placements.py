"""Every strategy row prices the code that ships: on the same requests, the replay's ``anchored-tail`` and
``multi-point`` place exactly what ``CachePointChatBedrockConverse`` places, and ``langchain-aws`` exactly what
langchain-aws's own ``ChatBedrockConverse`` places for ``cache_control`` (real tau-bench conversations when the
shared data is present, and a hand-made tool loop always)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_aws import ChatBedrockConverse

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from shared_data import find_data_file  # noqa: E402
from support.bedrock import client_and_stub  # noqa: E402

from promptcache.integrations.bedrock import CachePointChatBedrockConverse  # noqa: E402
from promptcache.replay._models import cache_rules  # noqa: E402
from promptcache.replay._prepare import Request, prepare, requests_of  # noqa: E402
from promptcache.replay._readers import read_file  # noqa: E402
from promptcache.replay._registry import make_strategy  # noqa: E402
from promptcache.replay._simulator import Checkpoint  # noqa: E402
from promptcache.replay._strategies import LangChainAwsStrategy  # noqa: E402
from promptcache.replay._tokens import TokenCounter  # noqa: E402
from promptcache.replay._transcript import Block, Conversation, Message  # noqa: E402

SONNET4 = "anthropic.claude-sonnet-4-20250514-v1:0"
SONNET45 = "anthropic.claude-sonnet-4-5-20250929-v1:0"


def _tool_loop() -> Conversation:
    """A system prompt over the minimum, parallel tool calls (past the lookback) and plain turns."""
    calls = tuple(Block("tool_use", "{}", "lookup", f"t{i}") for i in range(12))
    results = [Message("tool", (Block("tool_result", "result " * 40, id=f"t{i}"),)) for i in range(12)]
    return Conversation(
        "loop",
        "loop",
        (Block("text", "policy " * 1200),),
        [
            Message("user", (Block("text", "question " * 30),)),
            Message("assistant", calls),
            *results,
            Message("assistant", (Block("text", "answer " * 20),)),
            Message("user", (Block("text", "follow-up " * 700),)),
            Message("assistant", (Block("text", "done " * 5),)),
            Message("user", (Block("text", "thanks"),)),
            Message("assistant", (Block("text", "bye"),)),
        ],
    )


def _conversations() -> list[Conversation]:
    convs = [_tool_loop()]
    tau = find_data_file("tau_bench_gpt-4o-airline.json", required=False)
    if tau is not None:
        convs += read_file(tau)[:12]
    return convs


def _converse(request: Request) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[int, int], int]:
    """The request as real Converse ``system`` and ``messages`` (what the wrapper receives), the replay's token
    count of each message dict (by ``id``), and the system prompt's tokens."""
    prepared = request.prepared
    conv = prepared.conversation
    system = [{"text": b.text} for b in conv.system]
    blocks: list[dict[str, Any]] = []
    for message in conv.messages:
        for b in message.blocks:
            if b.kind == "tool_use":
                blocks.append({"toolUse": {"toolUseId": b.id, "name": b.name, "input": {}}})
            elif b.kind == "tool_result":
                blocks.append({"toolResult": {"toolUseId": b.id, "content": [{"text": b.text or "."}]}})
            else:
                blocks.append({"text": b.text if b.text.strip() else "."})
    messages, tokens = [], {}
    for group in request.groups:
        start, end = group.start - prepared.system_end, group.end - prepared.system_end
        message = {"role": group.role, "content": blocks[start:end]}
        tokens[id(message)] = prepared.cum[group.end] - prepared.cum[group.start]
        messages.append(message)
    return system, messages, tokens, prepared.cum[prepared.system_end] - prepared.cum[prepared.tools_end]


def _points_of(request: Request, system: list[dict[str, Any]], messages: list[dict[str, Any]]) -> list[Checkpoint]:
    """Where cachePoint blocks ended up, as the replay's checkpoints (TTL from the block)."""
    prepared = request.prepared
    out = []

    def ttl(block: dict[str, Any]) -> float:
        return 3600.0 if block["cachePoint"].get("ttl") == "1h" else 300.0

    if system and "cachePoint" in system[-1]:
        out.append(Checkpoint(prepared.system_end, ttl(system[-1]), "system"))
    for group, message in zip(request.groups, messages):
        if message["content"] and "cachePoint" in message["content"][-1]:
            out.append(Checkpoint(group.end, ttl(message["content"][-1])))
    return sorted(out, key=lambda p: p.boundary)


def _requests(conv: Conversation) -> list[Request]:
    counter = TokenCounter()
    return requests_of(prepare(conv, counter), counter)


@pytest.mark.parametrize(("strategy", "model", "ttl"), [
    ("anchored-tail", SONNET4, None), ("multi-point", SONNET4, None), ("anchored-tail", SONNET45, "1h"),
])  # fmt: skip
def test_plugin_rows_place_what_the_wrapper_places(strategy: str, model: str, ttl: str | None) -> None:
    compared = 0
    for conv in _conversations():
        replay = make_strategy(strategy, cache_rules(model), None, 3600.0 if ttl else 300.0)
        tokens: dict[int, int] = {}
        system_tokens = [0]

        def count(message: Any) -> int:
            return system_tokens[0] if message.get("role") == "system" else tokens[id(message)]

        client, _ = client_and_stub()
        wrapper = CachePointChatBedrockConverse(
            model=f"us.{model}", client=client, region_name="us-east-1", strategy=strategy, cache_ttl=ttl,
            token_counter=count,
        )  # fmt: skip
        for request in _requests(conv):
            system, messages, tokens_now, system_tokens[0] = _converse(request)
            tokens.clear()
            tokens.update(tokens_now)
            wrapper._apply_cache_points(None, system, messages, {})
            placed = replay.place(request)
            assert placed == _points_of(request, system, messages), (conv.id, request.number)
            compared += bool(placed)
    assert compared >= 4 + (40 if find_data_file("tau_bench_gpt-4o-airline.json", required=False) else 0)


def test_langchain_aws_row_places_what_langchain_aws_places() -> None:
    compared = 0
    for conv in _conversations():
        replay = make_strategy("langchain-aws", cache_rules(SONNET4))
        assert isinstance(replay, LangChainAwsStrategy)
        client, _ = client_and_stub()
        model = ChatBedrockConverse(model=f"us.{SONNET4}", client=client, region_name="us-east-1")
        for request in _requests(conv):
            system, messages, _, _ = _converse(request)
            model._apply_cache_points({"type": "ephemeral"}, system, messages, {})
            placed = sorted(replay.place(request), key=lambda p: p.boundary)
            assert placed == _points_of(request, system, messages), (conv.id, request.number)
            # without langchain-aws installed, the transcribed rules place the same
            assert sorted(replay.transcribed(request), key=lambda p: p.boundary) == placed
            compared += bool(placed)
    assert compared >= 4 + (40 if find_data_file("tau_bench_gpt-4o-airline.json", required=False) else 0)
