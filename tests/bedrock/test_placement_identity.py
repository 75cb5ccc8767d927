"""A request's cache points depend on the messages' content only: the same conversation passed as the same message
objects, as deep copies, or to a fresh wrapper sharing the placement store gives the same Converse request, and the
caller's messages come back unchanged.

langchain-aws trims trailing whitespace from a conversation's final ``AIMessage`` by assigning to the message it
was given; the wrapper hands it copies, so a reply that ends in a space is not trimmed for good in the caller's
history (which would change its token count, and so the placement, on the conversation's next request).

Real boto3 client + botocore Stubber; the requests are taken as botocore builds them.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from support.bedrock import CLAUDE, add_stream_response, client_and_stub, converse_response, get_weather, words

from promptcache.backends import InMemoryServerCache
from promptcache.integrations.bedrock import CachePointChatBedrockConverse

DOCUMENT = {"type": "document", "document": {"format": "txt", "name": "d", "source": {"bytes": b"hello " * 300}}}


def _conversation(tag: str) -> list[BaseMessage]:
    """A system prompt, then turns of question, tool call, tool result and an answer ending in a space."""
    messages: list[BaseMessage] = [SystemMessage(words(f"sys-{tag}", 300))]
    for turn in range(6):
        messages.append(HumanMessage(words(f"q{turn}", 300)))
        messages.append(
            AIMessage("", tool_calls=[{"id": f"c{turn}", "name": "get_weather", "args": {"city": f"x{turn}"}}])
        )
        messages.append(ToolMessage(words(f"r{turn}", 300), tool_call_id=f"c{turn}"))
        messages.append(AIMessage(words(f"a{turn}", 300) + " "))
    return messages


def _model(store: InMemoryServerCache) -> tuple[Any, Any, list[dict[str, Any]]]:
    client, stub = client_and_stub()
    sent: list[dict[str, Any]] = []
    for operation in ("Converse", "ConverseStream"):
        client.meta.events.register(
            f"before-parameter-build.bedrock-runtime.{operation}",
            lambda params, **_: sent.append(copy.deepcopy(params)),
        )
    model = CachePointChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1", placement_store=store)
    return model.bind_tools([get_weather]), stub, sent


def _send(model: Any, stub: Any, messages: list[BaseMessage]) -> None:
    stub.add_response("converse", converse_response("ok"), None)
    with stub:
        model.invoke(messages)


def _message_points(request: dict[str, Any]) -> list[int]:
    return [i for i, m in enumerate(request["messages"]) if any("cachePoint" in b for b in m["content"])]


def test_same_objects_deep_copies_and_a_fresh_wrapper_send_the_same_request() -> None:
    tag = uuid.uuid4().hex  # the conversation id is a hash of the system prompt: one of this test's own
    history = _conversation(tag)
    pristine = copy.deepcopy(history)
    follow_up = HumanMessage(content=[{"type": "text", "text": "see doc"}, DOCUMENT])

    same, same_stub, same_sent = _model(InMemoryServerCache())
    _send(same, same_stub, history)
    _send(same, same_stub, history + [follow_up])

    copied, copied_stub, copied_sent = _model(InMemoryServerCache())
    _send(copied, copied_stub, copy.deepcopy(pristine))
    _send(copied, copied_stub, copy.deepcopy(pristine + [follow_up]))

    shared = InMemoryServerCache()
    first, first_stub, first_sent = _model(shared)
    _send(first, first_stub, copy.deepcopy(pristine))
    second, second_stub, second_sent = _model(shared)  # a new wrapper: only the store carries the placements
    _send(second, second_stub, copy.deepcopy(pristine + [follow_up]))

    assert same_sent[0] == copied_sent[0] == first_sent[0]
    assert [_message_points(r) for r in same_sent] == [[20, 21, 22, 23], [20, 21, 22, 23]]
    assert same_sent[1] == copied_sent[1] == second_sent[0]
    assert same_sent[0]["messages"][23]["content"][0]["text"].endswith(" w")  # what was sent is still trimmed
    assert same_sent[1]["messages"][23]["content"][0]["text"].endswith(" w ")
    assert history == pristine  # the caller's final reply keeps its trailing space


def test_a_final_reply_with_text_blocks_is_left_as_the_caller_gave_it() -> None:
    tag = uuid.uuid4().hex
    history: list[BaseMessage] = [
        SystemMessage(words(f"sys-{tag}", 300)),
        HumanMessage(words("q", 300)),
        AIMessage(content=[{"type": "text", "text": words("a", 300) + "  "}]),
    ]
    pristine = copy.deepcopy(history)
    model, stub, sent = _model(InMemoryServerCache())
    _send(model, stub, history)
    assert history == pristine
    assert history[2].content[0]["text"].endswith(" w  ")
    assert sent[0]["messages"][1]["content"][0]["text"].endswith(" w")


def test_streaming_leaves_the_final_reply_as_the_caller_gave_it() -> None:
    history = _conversation(uuid.uuid4().hex)
    pristine = copy.deepcopy(history)
    model, stub, sent = _model(InMemoryServerCache())
    add_stream_response(stub, "ok", None)
    with stub:
        assert "".join(chunk.text for chunk in model.stream(history)) == "ok"
    assert history == pristine
    assert _message_points(sent[0]) == [20, 21, 22, 23]
    assert sent[0]["messages"][23]["content"][0]["text"].endswith(" w")
