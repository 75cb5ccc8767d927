"""A NaN or Infinity in a log's FIRST record does not hide its format: detection parses the first line as the
reader parses every line (``NaN`` / ``Infinity`` read as text, which no field takes as a number), so a value the
reader never uses (a temperature, a duration) leaves the log read as it is without it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from promptcache.replay._bedrock_logs import is_invocation_log
from promptcache.replay._claude_code import is_claude_code_log
from promptcache.replay._formats import detect_jsonl
from promptcache.replay._readers import read_file

DATA = Path(__file__).resolve().parents[1] / "data"
NAN, INF = float("nan"), float("inf")


def _span_attributes(rec: dict[str, Any]) -> list[dict[str, Any]]:
    attributes: list[dict[str, Any]] = rec["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    return attributes


#: (log, how its first record gets a non-finite number, the format its reader has, conversations, requests)
CASES: dict[str, tuple[str, Callable[[dict[str, Any]], None], str, int, int]] = {
    "openai-proxy": (
        "call_logs/openai_proxy.jsonl",
        lambda r: r["request"].update(temperature=NAN),
        "OpenAI request/response logs",
        3,
        4,
    ),
    "langsmith": (
        "call_logs/langsmith_runs.jsonl",
        lambda r: r["extra"]["metadata"].update(score=NAN),
        "LangSmith runs",
        2,
        3,
    ),
    "anthropic-batch": (
        "call_logs/anthropic_batch.jsonl",
        lambda r: r["params"].update(temperature=NAN),
        "Anthropic Message Batches results",
        3,
        3,
    ),
    "stream-json": (
        "call_logs/stream_json.jsonl",
        lambda r: r.update(duration_ms=INF),
        "Claude Code stream-json",
        2,
        4,
    ),
    "otlp": (
        "call_logs/otel_events.jsonl",
        lambda r: _span_attributes(r).append({"key": "gen_ai.request.temperature", "value": {"doubleValue": NAN}}),
        "OpenTelemetry GenAI spans (OTLP JSON)",
        1,
        1,
    ),
}


def _with_first_record(tmp_path: Path, log: str, change: Callable[[dict[str, Any]], None]) -> Path:
    lines = (DATA / log).read_text().splitlines()
    first = json.loads(lines[0])
    change(first)
    lines[0] = json.dumps(first)  # Python's json writes NaN / Infinity as bare words
    assert "NaN" in lines[0] or "Infinity" in lines[0]
    path = tmp_path / Path(log).name
    path.write_text("\n".join(lines) + "\n")
    return path


def _shape(path: Path) -> list[tuple[str, int]]:
    return [(c.id, len(c.messages)) for c in read_file(path)]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_non_finite_number_in_the_first_record_keeps_the_format(tmp_path: Path, case: str) -> None:
    log, change, fmt_name, conversations, requests = CASES[case]
    path = _with_first_record(tmp_path, log, change)
    fmt = detect_jsonl(path.read_bytes())
    assert fmt is not None and fmt.name == fmt_name
    read = read_file(path)
    assert (len(read), sum(len(c.request_ends()) for c in read)) == (conversations, requests)
    assert _shape(path) == _shape(DATA / log)


@pytest.mark.filterwarnings("ignore:.*skipped")
def test_an_invocation_log_with_nan_in_its_first_inference_config_is_read(tmp_path: Path) -> None:
    log = "bedrock_logs/converse.jsonl"
    path = _with_first_record(
        tmp_path, log, lambda r: r["input"]["inputBodyJson"].setdefault("inferenceConfig", {}).update(temperature=NAN)
    )
    assert is_invocation_log(data=path.read_bytes()) is True
    assert _shape(path) == _shape(DATA / log)


def test_a_claude_code_log_with_nan_in_its_first_record_is_recognised(tmp_path: Path) -> None:
    path = _with_first_record(tmp_path, "claude_code/compact.jsonl", lambda r: r.update(costUSD=NAN))
    head = path.read_bytes().split(b"\n", 1)[0]
    assert is_claude_code_log(head) is True
