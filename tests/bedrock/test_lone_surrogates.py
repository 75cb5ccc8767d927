"""Text holding a lone surrogate (U+D800..U+DFFF) gets cache points like any other text.

botocore accepts such a request: its rest-json serialiser writes the body with ``json.dumps``, which escapes a lone
surrogate as ``\\ud800`` (valid JSON text), so the request reaches Bedrock. Placement must not refuse what botocore
sends: the fingerprints and the conversation id hash such a str with its surrogates escaped
(`promptcache._keys.canonical_json`), and the counts fall back from orjson where it refuses one.

Real boto3 client + botocore Stubber; the body is taken as botocore serialised it.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from botocore.serialize import create_serializer
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from support.bedrock import CLAUDE, client_and_stub, converse_response, get_weather, words

from promptcache.cache_points import get_model_info
from promptcache.integrations.bedrock import CachePointChatBedrockConverse


def _model() -> tuple[Any, Any, list[dict[str, Any]], list[bytes]]:
    client, stub = client_and_stub()
    sent: list[dict[str, Any]] = []
    bodies: list[bytes] = []
    service = client.meta.service_model
    serializer = create_serializer(service.metadata["protocol"])  # the one botocore builds the HTTP body with

    def record(params: dict[str, Any], **_: Any) -> None:
        sent.append(copy.deepcopy(params))
        bodies.append(serializer.serialize_to_request(params, service.operation_model("Converse"))["body"])

    client.meta.events.register("before-parameter-build.bedrock-runtime.Converse", record)
    model = CachePointChatBedrockConverse(
        model=CLAUDE,
        client=client,
        region_name="us-east-1",
        cache_model_info=get_model_info(CLAUDE, min_tokens_per_cache_point=40),
    )
    return model.bind_tools([get_weather]), stub, sent, bodies


def _send(model: Any, stub: Any, messages: list[BaseMessage]) -> None:
    stub.add_response("converse", converse_response("ok"), None)
    with stub:
        model.invoke(messages)


def _points(request: dict[str, Any]) -> tuple[int, list[int]]:
    system = sum("cachePoint" in b for b in request["system"])
    return system, [i for i, m in enumerate(request["messages"]) if any("cachePoint" in b for b in m["content"])]


def _conversation(odd: str) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """A first request's messages and its next request's, with ``odd`` in the system prompt, a text block, a tool
    call's input, a tool result and the next user turn."""
    first: list[BaseMessage] = [
        SystemMessage(words(f"sys-{uuid.uuid4().hex} {odd}", 60)),  # a conversation id of this call's own
        HumanMessage(content=[{"type": "text", "text": words(f"lone {odd} x", 60)}]),
        AIMessage("", tool_calls=[{"id": "c1", "name": "get_weather", "args": {"city": f"Par{odd}is"}}]),
        ToolMessage(words(f"result {odd}", 60), tool_call_id="c1"),
    ]
    return first, first + [AIMessage(words("answer", 60)), HumanMessage(words(f"next {odd}", 60))]


def test_lone_surrogates_are_placed_like_other_text_and_sent_escaped() -> None:
    first, second = _conversation("\ud800")
    model, stub, sent, bodies = _model()
    for messages in (first, second, second):
        _send(model, stub, messages)

    plain_first, plain_second = _conversation("\ufffd")  # the same conversation in valid text
    plain, plain_stub, plain_sent, _ = _model()
    for messages in (plain_first, plain_second, plain_second):
        _send(plain, plain_stub, messages)

    # the third request finds the second's placements by their fingerprints, as the valid-text twin does
    assert [_points(r) for r in sent] == [_points(r) for r in plain_sent] == [(1, [0, 1, 2]), (1, [3, 4]), (1, [4])]
    assert sent[0]["messages"][0]["content"][0]["text"].startswith("lone \ud800 x w")
    assert sent[0]["messages"][1]["content"][0]["toolUse"]["input"] == {"city": "Par\ud800is"}
    assert len(bodies) == 3
    for escaped in (rb"lone \ud800 x", rb"Par\ud800is", rb"result \ud800"):  # on the wire: JSON escapes
        assert all(escaped in body for body in bodies)
    assert rb"next \ud800" in bodies[1]
