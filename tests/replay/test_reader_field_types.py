"""Log records whose fields have the wrong JSON type: one error line (exit 2), never a traceback.

Each file is written by the test: the smallest record of a format (Langfuse observation, Claude Code stream-json
event, OTLP/JSON traces document, OpenAI request/response log) with one field of another type (a list or object
where a string is expected, a number where a list or object is expected). Format detection and the readers look
up such values in sets (unhashable) or iterate them; both must treat a wrongly typed field as "not this shape".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import main


def replay(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str) -> tuple[int, str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    code = main(["replay", str(path), "--out", str(tmp_path / "out"), "--no-chart"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("kind", [[], {}, ["GENERATION"]])
def test_an_unhashable_observation_type_is_no_known_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: object
) -> None:
    code, err = replay(tmp_path, capsys, "a.json", json.dumps([{"type": kind, "traceId": "t"}]))
    assert code == 2
    assert err.startswith("promptcache: error: ")
    assert f"{tmp_path / 'a.json'}:1: " in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_an_unhashable_stream_json_type_is_no_known_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = json.dumps({"type": {}, "session_id": "s", "parent_tool_use_id": None, "uuid": "u1"})
    code, err = replay(tmp_path, capsys, "s.jsonl", line + "\n")
    assert code == 2
    assert f"{tmp_path / 's.jsonl'}:1: " in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "doc", [{"resourceSpans": [{"scopeSpans": 5}]}, {"resourceSpans": [{"scopeSpans": [{"spans": -1}]}]}]
)
def test_otlp_span_lists_of_another_type_hold_no_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: object
) -> None:
    code, err = replay(tmp_path, capsys, "t.json", json.dumps(doc))
    assert (code, err.strip()) == (
        2,
        f"promptcache: error: {tmp_path / 't.json'}:1: no model call with a prompt and a reply in the file"
        " (read as otel-genai)",
    )


def test_an_otlp_event_named_by_a_list_is_no_known_event(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    attrs = [
        {"key": "gen_ai.system", "value": {"stringValue": "openai"}},
        {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o-mini"}},
        {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "1100"}},
        {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "7"}},
    ]
    content = lambda text: [{"key": "content", "value": {"stringValue": text}}]  # noqa: E731
    span = {
        "traceId": "c3",
        "spanId": "e1",
        "name": "chat gpt-4o-mini",
        "startTimeUnixNano": "1772449200000000000",
        "attributes": attrs,
        "events": [
            {"name": [], "attributes": content("ignored: its name is no event name")},
            {"name": "gen_ai.user.message", "attributes": content("Where is my order?")},
            {"name": "gen_ai.choice", "attributes": content("It ships today.")},
        ],
    }
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    code, err = replay(tmp_path, capsys, "c.json", json.dumps(doc))
    assert code == 0, err
    report = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert report["requests"] == 1


@pytest.mark.parametrize(("message", "shown"), [(5, "5"), ("text", "'text'"), ([1], "[1]")])
def test_an_openai_reply_message_that_is_no_object_is_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], message: object, shown: str
) -> None:
    record = {
        "request": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]},
        "response": {"choices": [{"message": message}], "usage": {"prompt_tokens": 5, "completion_tokens": 1}},
    }
    code, err = replay(tmp_path, capsys, "d.jsonl", json.dumps(record) + "\n")
    assert (code, err.strip()) == (
        2,
        f"promptcache: error: {tmp_path / 'd.jsonl'}:1: OpenAI request/response logs: the reply message must be an"
        f" object, got {shown}",
    )
