"""Claude on Bedrock rejects a cache point directly after a non-PDF ``document`` block (txt, md, csv, html, doc,
docx, xls, xlsx): such a document is a blocker, so the point goes before it (at the previous message end), never
right after it; a caller's own point there is refused before anything is sent. A PDF document takes a point."""

from __future__ import annotations

import copy

import boto3
import pytest
from botocore.stub import Stubber
from langchain_core.messages import AIMessage, HumanMessage

from promptcache.cache_points import get_model_info
from promptcache.cache_points._converse import place_cache_points
from promptcache.integrations.bedrock import CachePointChatBedrockConverse

CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"
CP = {"cachePoint": {"type": "default"}}
NON_PDF = ["txt", "md", "csv", "html", "doc", "docx", "xls", "xlsx"]
MIME = {
    "txt": "text/plain",
    "md": "text/markdown",
    "csv": "text/csv",
    "html": "text/html",
    "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pdf": "application/pdf",
}


def _client():
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    sent: list[dict] = []
    client.meta.events.register(
        "provide-client-params.bedrock-runtime.*", lambda params, **_: sent.append(copy.deepcopy(params))
    )
    return client, Stubber(client), sent


def _reply():
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        "metrics": {"latencyMs": 1},
    }


def _model(client):
    info = get_model_info(CLAUDE, min_tokens_per_cache_point=20)
    return CachePointChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1", cache_model_info=info)


def _file(fmt: str) -> dict:
    return {"type": "file", "base64": "aGVsbG8gd29ybGQ=", "mime_type": MIME[fmt], "filename": f"notes.{fmt}"}


def _points_after(params: dict) -> list[tuple[int, str]]:
    """(message index, kind of the block right before) for every point in the messages."""
    out = []
    for i, message in enumerate(params["messages"]):
        content = message["content"]
        for j, block in enumerate(content):
            if "cachePoint" in block:
                out.append((i, next(iter(content[j - 1])) if j else "<first>"))
    return out


@pytest.mark.parametrize("fmt", NON_PDF)
def test_no_point_right_after_a_non_pdf_document_the_tail_moves_before_it(fmt):
    client, stub, sent = _client()
    model = _model(client)
    stub.add_response("converse", _reply(), None)
    history = [
        HumanMessage("Here is some context " + "w " * 40),
        AIMessage("Understood " + "w " * 40),
        HumanMessage(content=[{"type": "text", "text": "Summarise this file"}, _file(fmt)]),
    ]
    with stub:
        model.invoke(history)
    params = sent[-1]
    last = params["messages"][-1]["content"]
    assert [next(iter(b)) for b in last] == ["text", "document"]  # no point after the document
    assert last[1]["document"]["format"] == fmt
    # the tail sits at the previous message end, before the document (and a spare slot at the first message)
    assert _points_after(params) == [(0, "text"), (1, "text")]


def test_a_pdf_document_takes_the_point_right_after_it():
    client, stub, sent = _client()
    model = _model(client)
    stub.add_response("converse", _reply(), None)
    with stub:
        model.invoke([HumanMessage(content=[{"type": "text", "text": "Read " + "w " * 40}, _file("pdf")])])
    assert [next(iter(b)) for b in sent[-1]["messages"][-1]["content"]] == ["text", "document", "cachePoint"]


@pytest.mark.parametrize("fmt", NON_PDF)
def test_a_callers_point_right_after_a_non_pdf_document_is_refused_before_sending(fmt):
    client, stub, sent = _client()
    model = _model(client)
    with stub, pytest.raises(ValueError) as info:
        model.invoke([HumanMessage(content=[{"type": "text", "text": "Read this"}, _file(fmt), dict(CP)])])
    assert sent == []
    stub.assert_no_pending_responses()
    message = str(info.value)
    assert f"cachePoint at messages[0].content[2] follows a {fmt} document block" in message
    assert "anthropic.claude-sonnet-4-20250514-v1:0" in message


def test_a_callers_point_before_the_document_is_accepted():
    doc = {"document": {"format": "csv", "name": "data", "source": {"bytes": b"a,b\n1,2"}}}
    messages = [{"role": "user", "content": [{"text": "Read this"}, dict(CP), doc]}]
    plan = place_cache_points(get_model_info(CLAUDE, min_tokens_per_cache_point=1), None, messages)
    assert plan.manual_points == 1
    assert plan.messages[0]["content"] == [{"text": "Read this"}, CP, doc]  # nothing added after the document


def test_place_cache_points_skips_a_message_ending_with_a_non_pdf_document():
    doc = {"document": {"format": "md", "name": "readme", "source": {"bytes": b"# Title"}}}
    messages = [
        {"role": "user", "content": [{"text": "a " * 50}]},
        {"role": "assistant", "content": [{"text": "b " * 50}]},
        {"role": "user", "content": [{"text": "c"}, doc]},
    ]
    info = get_model_info(CLAUDE, min_tokens_per_cache_point=1)
    for strategy in ("anchored-tail", "multi-point"):
        from promptcache.integrations.bedrock import resolve_strategy

        plan = place_cache_points(info, None, messages, strategy=resolve_strategy(strategy))
        assert plan.messages[2]["content"] == [{"text": "c"}, doc]
        assert [p.index for p in plan.placements] == ([0, 1] if strategy == "anchored-tail" else [0])
