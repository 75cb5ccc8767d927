"""OTLP ``AnyValue`` attributes are read by their shape (opentelemetry-proto ``common.proto``): a string attribute
given as an array or an object, or a ``stringValue`` holding JSON of another type, is an error naming the span
and attribute, never a crash; a count given as a string or a fraction is a bad count, the span read without usage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from promptcache._cli import main
from promptcache.replay._read_otel import _value
from promptcache.replay._readers import read_file
from promptcache.replay._skipped import SkippedLines, skipping
from promptcache.replay._transcript import TranscriptError

SPANS = "resourceSpans[0].scopeSpans[0].spans[0].attributes"


def _doc(tmp_path: Path, attrs: dict[str, Any]) -> Path:
    span = {
        "traceId": "t1",
        "spanId": "s1",
        "startTimeUnixNano": "1772445601000000000",
        "attributes": [{"key": k, "value": v} for k, v in attrs.items()],
    }
    path = tmp_path / "otel.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    return path


MODEL = {"stringValue": "anthropic.claude-sonnet-4-5-20250929-v1:0"}


@pytest.mark.parametrize(
    ("operation", "shown"),
    [
        ({"arrayValue": {"values": [{"stringValue": "chat"}]}}, '["chat"]'),
        ({"stringValue": {"a": 1}}, '{"a":1}'),
        ({"kvlistValue": {"values": [{"key": "a", "value": {"intValue": "1"}}]}}, '{"a":1}'),
        ({"intValue": "7"}, "7"),
    ],
)
def test_an_operation_name_that_is_not_a_string_is_named(
    operation: dict[str, Any], shown: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _doc(tmp_path, {"gen_ai.operation.name": operation, "gen_ai.request.model": MODEL})
    with pytest.raises(TranscriptError) as err:
        read_file(path)
    message = (
        f"OpenTelemetry GenAI spans (OTLP JSON): attribute gen_ai.operation.name must be a string (stringValue), "
        f"got {shown}"
    )
    assert str(err.value) == f"{path}:1: {message}"
    assert main(["replay", str(path), "--no-chart", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip() == f"promptcache: error: {path}:1: {message}"


def test_a_model_id_given_as_an_array_is_named(tmp_path: Path) -> None:
    path = _doc(tmp_path, {"gen_ai.request.model": {"arrayValue": {"values": [MODEL]}}})
    with pytest.raises(TranscriptError, match=r"attribute gen_ai.request.model must be a string \(stringValue\)"):
        read_file(path)


@pytest.mark.parametrize(
    ("value", "shown"),
    [({"intValue": "12x"}, "'12x'"), ({"doubleValue": 4.5}, "4.5"), ({"stringValue": "100"}, "'100'")],
)
def test_a_count_that_is_not_a_count_drops_the_usage(value: dict[str, Any], shown: str, tmp_path: Path) -> None:
    path = _doc(tmp_path, {"gen_ai.request.model": MODEL, "gen_ai.usage.input_tokens": value,
                           "gen_ai.usage.output_tokens": {"intValue": "5"}})  # fmt: skip
    with skipping(SkippedLines()) as tally:
        (conv,) = read_file(path)
    assert [conv.messages[i].usage for i in conv.request_ends()] == [None]
    assert (
        tally.bad_usage_reason
        == f"gen_ai.usage.input_tokens must be a token count (an integer from 0 to 4,294,967,295), got {shown}"
    )


def test_any_value_shapes() -> None:
    assert _value({"stringValue": "chat"}) == "chat"
    assert _value({"intValue": "42"}) == 42
    assert _value({"intValue": 42}) == 42
    assert _value({"boolValue": True}) is True
    assert _value({"doubleValue": 2.5}) == 2.5
    assert _value({"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "1"}]}}) == ["a", 1]
    assert _value({"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}}) == {"k": "v"}
    assert _value({}) is None
    assert _value("chat") is None
