"""Fuzz: 1,000 seeded Converse conversations (documents of every format, images, reasoning, tool calls and results,
the caller's own points anywhere, inside tool results too) through the cache-point wrapper's request hook and a real
bedrock-runtime client with Stubber (which validates every request against the Converse schema), plus 40 built as
LangChain messages and sent with ``invoke`` (the whole path: langchain-aws' conversion, the hook, the client).

Every request sent breaks no rule of the placement table (each rule checked by ``support.bedrock_rules.RULE_CHECKS``,
written apart from the code under test; the first test checks it covers the table, rule for rule). A request is
refused (``ValueError``, nothing sent) only when the caller's own layout already breaks a rule."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import boto3
from botocore.stub import Stubber
from langchain_aws import ChatBedrockConverse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from support.bedrock_rules import RULE_CHECKS, all_points, family, rule_violations

from promptcache.cache_points import get_model_info
from promptcache.cache_points._rules import FAMILIES, PLACEMENT_RULES
from promptcache.integrations.bedrock import CachePointChatBedrockConverse

SEED = 20261201
CONVERSATIONS = 1_000
LANGCHAIN_CONVERSATIONS = 40
MODELS = [
    "us.anthropic.claude-sonnet-4-20250514-v1:0",
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0",  # 1-hour TTL
    "us.amazon.nova-pro-v1:0",
    "anthropic.claude-3-haiku-20240307-v1:0",  # no prompt caching on Bedrock
]
FORMATS = ["pdf", "csv", "doc", "docx", "xls", "xlsx", "html", "txt", "md"]  # every DocumentBlock format
BODY = b"%PDF-1.4 fuzz document body"
# Converse-native blocks inside LangChain messages (langchain-aws passes them through as they are)
IMAGE = {"type": "image", "image": {"format": "png", "source": {"bytes": b"\x89PNG fuzz"}}}
WORDS = "cache token prompt model request answer tool weather city flight booking refund".split()
REPLY = {
    "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
    "stopReason": "end_turn",
    "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
    "metrics": {"latencyMs": 1},
}


@tool
def lookup(query: str) -> str:
    """Look a passage up in the knowledge base and return it with its source and date."""
    return "found"


@tool
def weather(city: str) -> str:
    """Current weather for a city: temperature in Celsius, wind and a short description of the sky."""
    return "sunny"


def _copy(value: Any) -> Any:
    """A copy of nested dicts and lists (the rest is immutable here); far cheaper than ``copy.deepcopy``."""
    if type(value) is dict:
        return {k: _copy(v) for k, v in value.items()}
    if type(value) is list:
        return [_copy(v) for v in value]
    return value


def _point(rng: random.Random) -> dict[str, Any]:
    return {"cachePoint": {"type": "default", "ttl": "1h"} if rng.random() < 0.2 else {"type": "default"}}


def _text(rng: random.Random) -> dict[str, Any]:
    return {"type": "text", "text": " ".join(rng.choices(WORDS, k=rng.randint(3, 80)))}


def _user_block(rng: random.Random) -> dict[str, Any]:
    kind = rng.choice(["text", "text", "document", "document", "image"])
    if kind == "document":
        fmt = rng.choice(FORMATS)
        return {
            "type": "document",
            "document": {"format": fmt, "name": f"f{rng.randint(0, 99)}", "source": {"bytes": BODY}},
        }
    if kind == "image":
        return dict(IMAGE)
    return _text(rng)


def _with_points(rng: random.Random, blocks: list[dict[str, Any]], rate: float) -> list[dict[str, Any]]:
    """``blocks`` with the caller's own points inserted at random positions (any position, valid or not)."""
    out = list(blocks)
    while rng.random() < rate:
        out.insert(rng.randint(0, len(out)), _point(rng))
    return out


def _conversation(rng: random.Random, tools: bool) -> list[BaseMessage]:
    system = [_text(rng)]
    messages: list[BaseMessage] = [SystemMessage(content=_with_points(rng, system, 0.08))]
    for turn in range(rng.randint(1, 6)):
        user = [_user_block(rng) for _ in range(rng.randint(1, 4))]
        messages.append(HumanMessage(content=_with_points(rng, user, 0.04)))
        if turn == 0 and rng.random() < 0.3:
            continue  # end on this user message
        reply: list[dict[str, Any]] = []
        if rng.random() < 0.4:
            reply.append({"type": "reasoning_content", "reasoning_content": {"text": "thinking", "signature": "s"}})
        reply.append(_text(rng))
        calls = []
        if tools and rng.random() < 0.5:
            calls = [
                {"name": rng.choice(["lookup", "weather"]), "args": {"query": "x", "city": "y"}, "id": f"t{turn}{i}"}
                for i in range(rng.randint(1, 3))
            ]
        messages.append(AIMessage(content=_with_points(rng, reply, 0.02), tool_calls=calls))
        for call in calls:
            result = [rng.choice([_text(rng), _text(rng), dict(IMAGE)])]
            messages.append(ToolMessage(content=_with_points(rng, result, 0.04), tool_call_id=call["id"]))
        if not calls:
            messages.append(HumanMessage(content=_with_points(rng, [_user_block(rng)], 0.04)))
    return messages


def _converse_block(rng: random.Random) -> dict[str, Any]:
    kind = rng.choice(["text", "text", "document", "document", "image"])
    if kind == "document":
        fmt = rng.choice(FORMATS)
        return {"document": {"format": fmt, "name": f"f{rng.randint(0, 99)}", "source": {"bytes": BODY}}}
    if kind == "image":
        return {"image": dict(IMAGE["image"])}
    return {"text": _text(rng)["text"]}


def _points(rng: random.Random, blocks: list[dict[str, Any]], rate: float) -> list[dict[str, Any]]:
    out = list(blocks)
    while rng.random() < rate:
        out.insert(rng.randint(0, len(out)), _point(rng))
    return out


def _converse_request(rng: random.Random, model_id: str, tools: bool) -> dict[str, Any]:
    """A Converse request as langchain-aws hands it to the hook: system, alternating messages, tools."""
    messages: list[dict[str, Any]] = []
    for turn in range(rng.randint(1, 6)):
        user = [_converse_block(rng) for _ in range(rng.randint(1, 4))]
        if messages and any("toolUse" in b for b in messages[-1]["content"]):
            uses = [b["toolUse"]["toolUseId"] for b in messages[-1]["content"] if "toolUse" in b]
            results = []
            for use in uses:
                inner = [rng.choice([{"text": _text(rng)["text"]}, {"json": {"ok": True}}, {"image": IMAGE["image"]}])]
                results.append({"toolResult": {"toolUseId": use, "content": _points(rng, inner, 0.05)}})
            user = results + (user if rng.random() < 0.3 else [])
        messages.append({"role": "user", "content": _points(rng, user, 0.04)})
        reply: list[dict[str, Any]] = []
        if rng.random() < 0.4:
            reply.append({"reasoningContent": {"reasoningText": {"text": "thinking", "signature": "s"}}})
        reply.append({"text": _text(rng)["text"]})
        if tools and rng.random() < 0.5:
            for i in range(rng.randint(1, 3)):
                reply.append({"toolUse": {"toolUseId": f"t{turn}{i}", "name": "lookup", "input": {"query": "x"}}})
        messages.append({"role": "assistant", "content": _points(rng, reply, 0.02)})
    if rng.random() < 0.5 or any("toolUse" in b for b in messages[-1]["content"]):
        last = messages[-1]["content"]
        uses = [b["toolUse"]["toolUseId"] for b in last if "toolUse" in b]
        user = [{"toolResult": {"toolUseId": u, "content": [{"text": "done"}]}} for u in uses]
        user += [_converse_block(rng) for _ in range(rng.randint(0 if uses else 1, 3))]
        messages.append({"role": "user", "content": _points(rng, user, 0.04)})
    else:
        messages.pop()  # end on the user message before it
    params: dict[str, Any] = {
        "modelId": model_id,
        "messages": messages,
        "system": _points(rng, [{"text": _text(rng)["text"]}], 0.08),
        "inferenceConfig": {},
    }
    if tools:
        specs = [
            {"toolSpec": {"name": "lookup", "description": "Look up.", "inputSchema": {"json": {"type": "object"}}}}
        ]
        params["toolConfig"] = {"tools": _points(rng, specs, 0.05)}
    return params


def _hoisted(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with every point inside a toolResult moved right after it (where Bedrock takes it)."""
    params = _copy(params)
    for message in params["messages"]:
        blocks = []
        for block in message["content"]:
            if "toolResult" in block:
                inner = block["toolResult"]["content"]
                block["toolResult"]["content"] = [b for b in inner if "cachePoint" not in b]
                blocks += [block, *[b for b in inner if "cachePoint" in b]]
            else:
                blocks.append(block)
        message["content"] = blocks
    return params


class _Harness:
    """One real bedrock-runtime client with Stubber; every request's parameters are recorded."""

    def __init__(self) -> None:
        self.client = boto3.client(
            "bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
        )
        self.sent: list[dict[str, Any]] = []
        self.client.meta.events.register(
            "provide-client-params.bedrock-runtime.*", lambda params, **_: self.sent.append(_copy(params))
        )
        self.control = boto3.client(
            "bedrock", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
        )
        self.stub = Stubber(self.client)
        self.stub.activate()
        self.models: dict[Any, Any] = {}

    def send(self, runnable: Any, messages: list[BaseMessage], config: dict[str, Any]) -> dict[str, Any] | None:
        """The request sent, or ``None`` when the model refused it (nothing sent)."""
        before = len(self.sent)
        self.stub.add_response("converse", _copy(REPLY), None)
        try:
            runnable.invoke(messages, config=config)
        except ValueError:
            assert len(self.sent) == before  # refused before anything was sent
            self.stub.deactivate()  # drop the unused response
            self.stub = Stubber(self.client)
            self.stub.activate()
            return None
        assert len(self.sent) == before + 1
        return self.sent[-1]


def test_the_checks_cover_every_rule_of_the_table():
    assert set(RULE_CHECKS) == {rule.name for rule in PLACEMENT_RULES}
    for rule in PLACEMENT_RULES:
        assert RULE_CHECKS[rule.name][0] == rule.families, rule.name
        assert rule.source and set(rule.families) <= set(FAMILIES)


def _models(harness: _Harness, rng: random.Random) -> tuple[Any, Any, Any, bool]:
    """A random wrapper configuration: (model info, our model, the plain langchain-aws model, tools?)."""
    model_id = rng.choice(MODELS)
    min_tokens = rng.choice([1, 40, 200])
    info = get_model_info(model_id, min_tokens_per_cache_point=min_tokens)
    ttl = "1h" if "1h" in info.allowed_ttls and rng.random() < 0.3 else None
    strategy = rng.choice(["anchored-tail", "multi-point"])
    tools = rng.random() < 0.5
    key = (model_id, min_tokens, ttl, strategy)
    if key not in harness.models:
        ours = CachePointChatBedrockConverse(
            model=model_id,
            client=harness.client,
            bedrock_client=harness.control,
            region_name="us-east-1",
            cache_model_info=info,
            cache_ttl=ttl,
            strategy=strategy,
        )
        plain = ChatBedrockConverse(
            model=model_id, client=harness.client, bedrock_client=harness.control, region_name="us-east-1"
        )
        harness.models[key] = (ours, plain)
    ours, plain = harness.models[key]
    return info, ours, plain, tools


def _tally(seen: Counter[str], sent: dict[str, Any], caller: dict[str, Any], info: Any) -> None:
    last = sent["messages"][-1]["content"]
    if any("document" in b and b["document"]["format"] != "pdf" for b in last[-1:]):
        seen["ends with a non-PDF document"] += 1
    seen["with points added"] += len(all_points(sent)) > len(all_points(caller))
    seen[f"sent to {family(info)}"] += 1


def test_fuzzed_converse_requests_break_no_rule():
    rng = random.Random(SEED)
    harness = _Harness()
    seen: Counter[str] = Counter()
    broken: list[tuple[int, list[str]]] = []
    for n in range(CONVERSATIONS):
        info, ours, _, tools = _models(harness, rng)
        full = _converse_request(rng, info.model_id, tools)
        user_ends = [i + 1 for i, m in enumerate(full["messages"]) if m["role"] == "user"]
        for end in user_ends[-rng.randint(1, 2) :]:  # the last request, sometimes the one before it (a stored tail)
            params = _copy({**full, "messages": full["messages"][:end]})
            caller = _hoisted(params)
            caller_broken = rule_violations(caller, info)
            seen["requests"] += 1
            tool_config = params.get("toolConfig")
            try:  # the hook langchain-aws calls with the final request, then the client call it makes
                ours._apply_cache_points(None, params["system"], params["messages"], params)
            except ValueError as exc:
                seen["refused"] += 1
                assert caller_broken, f"conversation {n}: a valid caller layout was refused: {exc}"
                assert "Bedrock" in str(exc) or "rule" in str(exc)
                continue
            assert tool_config is None or "toolConfig" in params
            before = len(harness.sent)
            harness.stub.add_response("converse", _copy(REPLY), None)
            harness.client.converse(**params)  # the Stubber validates it against the Converse schema
            assert len(harness.sent) == before + 1
            sent = harness.sent[-1]
            if caller_broken:
                broken.append((n, ["caller's broken layout sent", *caller_broken]))
            problems = rule_violations(sent, info)
            if problems:
                broken.append((n, problems))
            _tally(seen, sent, caller, info)
    assert broken == []
    # the fuzz reaches every kind of request it is meant to (exact: the generator is seeded)
    assert dict(seen) == {
        "requests": 1477,
        "refused": 336,
        "sent to claude": 850,
        "sent to nova": 291,
        "with points added": 869,
        "ends with a non-PDF document": 247,
    }


def test_fuzzed_langchain_conversations_through_invoke_break_no_rule():
    rng = random.Random(SEED + 1)
    harness = _Harness()
    seen: Counter[str] = Counter()
    broken: list[tuple[int, list[str]]] = []
    for n in range(LANGCHAIN_CONVERSATIONS):
        info, ours, plain, tools = _models(harness, rng)
        if tools:
            ours, plain = ours.bind_tools([lookup, weather]), plain.bind_tools([lookup, weather])
        messages = _conversation(rng, tools)
        config = {"configurable": {"thread_id": f"fuzz-{n}"}}
        caller = harness.send(plain, messages, {})
        assert caller is not None
        caller_broken = rule_violations(caller, info)
        sent = harness.send(ours, messages, config)
        seen["requests"] += 1
        if sent is None:
            seen["refused"] += 1
            assert caller_broken, f"conversation {n}: a valid caller layout was refused"
            continue
        problems = rule_violations(sent, info)
        if problems:
            broken.append((n, problems))
        _tally(seen, sent, caller, info)
    assert broken == []
    assert dict(seen) == {
        "requests": 40,
        "refused": 10,
        "sent to claude": 24,
        "sent to nova": 6,
        "with points added": 24,
        "ends with a non-PDF document": 5,
    }
