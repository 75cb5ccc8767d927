"""The call-log readers, one per format, on fixtures written from each format's documented fields
(``tests/data/call_logs/``, see the README there): every field that decides what is replayed is checked.

LangSmith runs, Langfuse observations, OpenTelemetry GenAI spans (OTLP JSON), OpenAI request/response pairs as proxies
log them, Anthropic Message Batches and Claude Code stream-json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache.replay._engine import run_replay
from promptcache.replay._readers import read_file
from promptcache.replay._transcript import Block, Conversation, TranscriptError, Usage

DATA = Path(__file__).resolve().parents[1] / "data" / "call_logs"
SYS = "You are the support agent of a bicycle shop. Answer from the order system; be brief."
TOOL_CALL = Block("tool_use", '{"order_id":"A-17"}', "lookup_order")


def _roles(conv: Conversation) -> list[str]:
    return [m.role for m in conv.messages]


def _usages(conv: Conversation) -> list[Usage | None]:
    return [conv.messages[i].usage for i in conv.request_ends()]


# -- LangSmith ----------------------------------------------------------------------------------------------------
def test_langsmith_llm_runs_of_one_thread_are_one_conversation() -> None:
    agent, openai = read_file(DATA / "langsmith_runs.jsonl")  # chain/tool runs and the errored run: not calls
    assert agent.meta["format"] == "langsmith" and agent.meta["request_ids"] == ["r-llm-1", "r-llm-2"]
    assert agent.system == (Block("text", SYS),)
    assert _roles(agent) == ["user", "assistant", "tool", "assistant"]
    assert agent.messages[1].blocks == (Block("tool_use", '{"order_id":"A-17"}', "lookup_order", "call_1"),)
    assert (
        agent.messages[2].blocks[0].kind == "tool_result" and agent.messages[2].blocks[0].text == "shipped on 1 March"
    )
    assert agent.tools[0]["function"]["name"] == "lookup_order"  # extra.invocation_params.tools
    assert agent.family == "user:u-7"  # extra.metadata.user_id
    assert agent.messages[1].model == "claude-sonnet-4-5"  # extra.metadata.ls_model_name
    assert agent.messages[0].timestamp == pytest.approx(_epoch("2026-03-02T10:00:01"))


def test_langsmith_usage_metadata_with_cache_details_and_cache_control_points() -> None:
    agent, openai = read_file(DATA / "langsmith_runs.jsonl")
    # usage_metadata input_tokens include cache_read and cache_creation
    assert _usages(agent) == [Usage(10, 0, 1290, 0, 20), Usage(50, 1290, 0, 0, 9)]
    assert agent.meta["cache_points"][0] == [{"where": "system", "index": None, "after": 1, "ttl": None}]
    # an OpenAI-wrapper run: outputs.choices + outputs.usage (prompt_tokens include cached_tokens)
    assert _usages(openai) == [Usage(1076, 1024, 0, 0, 12)]
    assert openai.messages[1].model == "gpt-4o-mini"  # extra.invocation_params.model


def test_langsmith_json_export_uses_the_run_level_token_counts() -> None:
    (conv,) = read_file(DATA / "langsmith_runs.json")  # {"runs": [...]}
    # prompt_tokens (whole prompt) with prompt_token_details.cache_read; completion_tokens
    assert _usages(conv) == [Usage(52, 2048, 0, 0, 5)]
    assert conv.messages[1].blocks == (Block("text", "9 to 6."),)  # generations[0][0].text


# -- Langfuse -----------------------------------------------------------------------------------------------------
def test_langfuse_generations_with_usage_details() -> None:
    agent, other = read_file(DATA / "langfuse_observations.json")  # the SPAN is not a call
    assert agent.meta["format"] == "langfuse" and agent.meta["request_ids"] == ["o-gen-1", "o-gen-2"]
    assert agent.system == (Block("text", SYS),) and _roles(agent) == ["user", "assistant", "user", "assistant"]
    assert agent.messages[1].blocks == (Block("tool_use", '{"order_id":"A-17"}', "lookup_order", "tu1"),)
    assert agent.messages[3].blocks == (Block("text", "It shipped on 1 March."),)  # output as a string
    # usageDetails: input is the uncached part; cache_read_input_tokens / cache_creation_input_tokens
    assert _usages(agent) == [Usage(10, 0, 1290, 0, 22), Usage(40, 1290, 0, 0, 9)]
    assert agent.family == "user:u-7" and agent.messages[1].model == "claude-sonnet-4-5"
    assert _usages(other) == [Usage(1076, 1024, 0, 0, 5)]  # input_cached_tokens (OpenAI)


@pytest.mark.parametrize(
    ("details", "usage"),
    [
        # as Langfuse stores it: input leaves the cached tokens out (total is every type added up)
        ({"input": 52, "input_cached_tokens": 1024, "output": 5, "total": 1081}, Usage(52, 1024, 0, 0, 5)),
        ({"input": 40, "cache_read_input_tokens": 1290, "output": 9}, Usage(40, 1290, 0, 0, 9)),  # input < cached
        # sent by hand with the whole prompt in input: the total leaves the cache types out
        ({"input": 1076, "input_cached_tokens": 1024, "output": 5, "total": 1081}, Usage(52, 1024, 0, 0, 5)),
        ({"input": 1300, "cache_creation_input_tokens": 1290, "output": 2, "total": 1302}, Usage(10, 0, 1290, 0, 2)),
        # still in OpenAI's shapes: converted as Langfuse converts them (input = prompt - cached)
        (
            {
                "prompt_tokens": 1076,
                "completion_tokens": 5,
                "total_tokens": 1081,
                "prompt_tokens_details": {"cached_tokens": 1024},
            },
            Usage(52, 1024, 0, 0, 5),
        ),  # fmt: skip
        (
            {
                "input_tokens": 2000,
                "output_tokens": 7,
                "total_tokens": 2007,
                "input_tokens_details": {"cached_tokens": 1920},
            },
            Usage(80, 1920, 0, 0, 7),
        ),  # fmt: skip
    ],
)
def test_langfuse_usage_details_input_is_the_uncached_part(details: dict, usage: Usage) -> None:
    from promptcache.replay._read_langfuse import langfuse_usage

    assert langfuse_usage(details) == usage


# -- OpenTelemetry ------------------------------------------------------------------------------------------------
def test_otel_genai_spans_with_captured_content() -> None:
    agent, sized = read_file(DATA / "otel_genai.json")  # the invoke_agent span is not a call
    assert agent.meta["format"] == "otel-genai" and agent.meta["request_ids"] == ["s1", "s2"]
    assert agent.system == (Block("text", SYS),)  # gen_ai.system_instructions
    assert _roles(agent) == ["user", "assistant", "user", "assistant"]  # gen_ai.input.messages / output.messages
    assert agent.messages[1].blocks == (Block("tool_use", '{"order_id":"A-17"}', "lookup_order", "c1"),)
    assert agent.messages[2].blocks[0] == Block("tool_result", "shipped on 1 March", id="c1")
    # gen_ai.usage.input_tokens includes cache_read.input_tokens and cache_creation.input_tokens
    assert _usages(agent) == [Usage(10, 0, 1290, 0, 20), Usage(50, 1290, 0, 0, 9)]
    assert agent.messages[1].model == "anthropic.claude-sonnet-4-5-20250929-v1:0"  # gen_ai.request.model
    assert agent.messages[0].timestamp == 1772445601.0  # startTimeUnixNano


def test_otel_span_without_content_replays_from_its_sizes() -> None:
    _, sized = read_file(DATA / "otel_genai.json")
    assert sized.meta["sizes_only"] is True and len(sized.messages) == 2
    assert _usages(sized) == [Usage(904, 4096, 0, 0, 30)]


def test_otel_event_capture() -> None:
    (conv,) = read_file(DATA / "otel_events.jsonl")  # one OTLP request per line
    assert conv.system == (Block("text", SYS),)  # gen_ai.system.message event
    assert conv.messages[0].blocks == (Block("text", "Opening hours?"),)  # gen_ai.user.message
    assert conv.messages[1].blocks == (Block("text", "9 to 6."),)  # gen_ai.choice
    assert _usages(conv) == [Usage(1100, 0, 0, 0, 7)] and conv.messages[1].model == "gpt-4o-mini"  # gen_ai.system


# -- OpenAI proxy logs --------------------------------------------------------------------------------------------
def test_openai_chat_completions_pairs_as_proxies_log_them() -> None:
    agent, litellm, responses = read_file(DATA / "openai_proxy.jsonl")
    assert agent.meta["format"] == "openai-log" and agent.meta["request_ids"] == ["chatcmpl-1", "chatcmpl-2"]
    assert agent.system == (Block("text", SYS),) and _roles(agent) == ["user", "assistant", "tool", "assistant"]
    # prompt_tokens include prompt_tokens_details.cached_tokens; a Helicone-style {"body": ...} wrapper
    assert _usages(agent) == [Usage(1300, 0, 0, 0, 18), Usage(60, 1280, 0, 0, 9)]
    assert agent.messages[1].model == "gpt-4o-mini-2024-07-18"  # the response's model
    assert agent.family == "user:u-7" and agent.tools[0]["function"]["name"] == "lookup_order"
    assert agent.messages[0].timestamp == 1772445601.0  # the response's created
    assert _usages(litellm) == [Usage(12, 0, 0, 0, 2)] and litellm.messages[0].timestamp == 1772452800.0


def test_openai_responses_pair() -> None:
    *_, responses = read_file(DATA / "openai_proxy.jsonl")
    assert responses.system == (Block("text", SYS),)  # instructions
    assert responses.messages[0].blocks == (Block("text", "Opening hours?"),)  # input_text part
    assert responses.messages[1].blocks == (Block("text", "9 to 6."),)  # output message, output_text part
    assert _usages(responses) == [Usage(76, 1024, 0, 0, 5)]  # input_tokens_details.cached_tokens


# -- Anthropic Message Batches ------------------------------------------------------------------------------------
def test_anthropic_batch_results_joined_with_their_requests() -> None:
    one, two, alone = read_file(DATA / "anthropic_batch.jsonl")  # the errored result is skipped
    assert [c.id for c in (one, two, alone)] == ["q-1", "q-2", "q-3"]
    assert one.system[0].text.startswith(SYS) and one.messages[0].blocks == (Block("text", "Summarise ticket 1."),)
    assert one.meta["cache_points"] == [[{"where": "system", "index": None, "after": 1, "ttl": None}]]
    assert _usages(one) == [Usage(8, 0, 1210, 0, 30)] and _usages(two) == [Usage(8, 1210, 0, 0, 28)]
    assert one.messages[1].blocks == (Block("text", "Ticket 1: a flat tyre."),)
    assert (one.meta["sizes_only"], alone.meta["sizes_only"]) == (False, True)  # q-3 has no request: sizes only


def test_anthropic_batch_results_alone_replay_from_their_sizes() -> None:
    convs = read_file(DATA / "anthropic_batch_results.jsonl")
    assert [c.meta["sizes_only"] for c in convs] == [True, True, True]
    assert _usages(convs[1]) == [Usage(8, 1210, 0, 0, 28)]


# -- Claude Code stream-json --------------------------------------------------------------------------------------
def test_claude_code_stream_json() -> None:
    main, sub = read_file(DATA / "stream_json.jsonl")
    assert main.meta["format"] == "claude-code" and main.meta["hidden_prefix"] is True
    assert main.meta["request_ids"] == ["msg_01", "msg_02", "msg_03"]  # two lines of msg_01 are one call
    assert main.messages[0].blocks == (Block("text", ""),)  # the command-line prompt is not in the stream
    assert [b.kind for b in main.messages[1].blocks] == ["text", "tool_use"]
    assert main.messages[1].usage == Usage(3, 14000, 2100, 0, 60)  # the line with the most output tokens
    assert sub.id.endswith("/toolu_2") and sub.meta["agent"] == "toolu_2"  # parent_tool_use_id: the sub-agent
    assert sub.messages[0].blocks == (Block("text", "Find the tests"),) and _usages(sub) == [Usage(4, 0, 9000, 0, 12)]


# -- fidelity, detection and errors -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("otel_genai.json", "anthropic.claude-sonnet-4-5-20250929-v1:0"),
        ("stream_json.jsonl", "anthropic.claude-sonnet-4-5-20250929-v1:0"),
        ("anthropic_batch.jsonl", "anthropic.claude-sonnet-4-5-20250929-v1:0"),
    ],
)
def test_logged_usage_gives_the_billed_row_and_fidelity(name: str, model: str) -> None:
    result = run_replay([DATA / name], model)
    assert result.logged is not None and result.logged.requests == result.requests
    assert result.fidelity is not None and result.fidelity.calls == result.requests
    assert "as-logged" in result.strategies


def test_langsmith_fidelity_uses_the_logged_cache_control_points(tmp_path: Path) -> None:
    path = tmp_path / "claude_runs.jsonl"  # the Claude trace only (an OpenAI model has no price here)
    path.write_bytes(b"".join((DATA / "langsmith_runs.jsonl").read_bytes().splitlines(keepends=True)[:4]))
    result = run_replay([path], "anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert result.logged is not None and result.fidelity is not None and result.fidelity.calls == 2
    assert result.strategies["as-logged"].write_tokens > 0  # the system prompt's cache_control point


def _epoch(iso: str) -> float:
    from datetime import datetime, timezone

    return datetime.fromisoformat(iso).replace(tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize(
    ("name", "lines", "bad_line", "expected"),
    [
        (
            "runs.jsonl",
            [{"id": "a", "run_type": "llm", "inputs": {"messages": [{"role": "user", "content": "hi"}]},
              "outputs": {"generations": [[{"text": "ok"}]]}},
             {"id": "b", "run_type": "llm", "inputs": {"messages": "hi"}, "outputs": {}}],
            2,
            "LangSmith runs: expected a list of messages",
        ),
        (
            "obs.jsonl",
            [{"id": "g", "type": "GENERATION", "traceId": "t", "input": 5, "output": "x"}],
            1,
            "Langfuse observations: a generation's input must be a list of messages, got 5",
        ),
        (
            "pairs.jsonl",
            [{"request": {"model": "m", "messages": [{"role": "user", "content": "a"}]}, "response": "oops"}],
            1,
            "OpenAI request/response logs: the logged response must be an object",
        ),
        (
            "batch.jsonl",
            [{"custom_id": "x", "result": {"type": "succeeded", "message": None}}],
            1,
            "Anthropic Message Batches results: a succeeded result needs its message",
        ),
        (
            "calls.jsonl",
            [{"promptcache": "call", "version": 2, "request": {}, "response": {}}],
            1,
            "promptcache TrafficRecorder recording: recording version 2 is not 1",
        ),
        (
            "stream.jsonl",
            [{"type": "system", "subtype": "init", "session_id": "s"},
             {"type": "assistant", "session_id": "s", "parent_tool_use_id": None, "message": "x"}],
            2,
            "Claude Code stream-json: assistant line without a message object",
        ),
    ],
)  # fmt: skip
def test_a_malformed_record_is_named_by_file_and_line(
    tmp_path: Path, name: str, lines: list[object], bad_line: int, expected: str
) -> None:
    path = tmp_path / name
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(TranscriptError) as err:
        read_file(path)
    assert (err.value.path, err.value.line) == (str(path), bad_line)
    assert expected in err.value.reason


def test_a_malformed_span_in_a_json_document_is_named_by_its_line(tmp_path: Path) -> None:
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"spanId": "ok", "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "5"}}]},
        ["not", "a span"]]}]}]}  # fmt: skip
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(doc, indent=1))
    with pytest.raises(TranscriptError) as err:
        read_file(path)
    text = path.read_text().splitlines()
    assert text[err.value.line - 1].strip() == "[" and text[err.value.line].strip() == '"not",'
    assert "a span must be an object" in err.value.reason


def test_detection_is_by_content_not_file_name(tmp_path: Path) -> None:
    path = tmp_path / "export.txt"
    path.write_bytes((DATA / "langsmith_runs.jsonl").read_bytes())
    assert [c.meta["format"] for c in read_file(path)] == ["langsmith", "langsmith"]


def test_a_file_of_no_known_format_names_the_formats_tried_and_the_nearest_ones_missing_field(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({"id": "r1", "inputs": {"q": "hi"}, "outputs": {}, "trace_id": "t"}) + "\n")
    with pytest.raises(TranscriptError) as err:
        read_file(path)
    message = str(err.value)
    assert message.count("\n") == 0 and message.startswith(f"{path}:1: ")
    assert "tried promptcache TrafficRecorder recording, LangSmith runs, Langfuse observations" in message
    assert "nearest: LangSmith runs, which needs 'run_type'" in message


def test_otel_older_usage_names_are_read(tmp_path: Path) -> None:
    attrs = [
        {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o-mini"}},
        {"key": "gen_ai.usage.prompt_tokens", "value": {"intValue": "120"}},
        {"key": "gen_ai.usage.completion_tokens", "value": {"intValue": 7}},
    ]
    path = tmp_path / "old.json"
    path.write_text(
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "x", "attributes": attrs}]}]}]})
    )
    (conv,) = read_file(path)
    assert _usages(conv) == [Usage(120, 0, 0, 0, 7)] and conv.meta["sizes_only"] is True


def test_a_json_document_of_no_known_format_gets_the_hint_too(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps([{"custom_id": "a", "outcome": {}}]))
    with pytest.raises(TranscriptError) as err:
        read_file(path)
    assert "nearest: Anthropic Message Batches results, which needs 'result'" in err.value.reason
