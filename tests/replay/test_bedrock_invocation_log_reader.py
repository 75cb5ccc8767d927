"""The Bedrock model invocation log reader: every record with a reply is one request; records whose prompt extends
an earlier one's form a conversation; the caller's cache points and the logged usage are kept.

Fixtures: ``tests/data/bedrock_logs/`` (AWS's documented record schema; usage from the documented caching rules,
rebuilt by ``tests/data/bedrock_logs/build_fixtures.py``; see the README there).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from promptcache._cli import main
from promptcache.replay._readers import read_file
from promptcache.replay._transcript import Block, Conversation, TranscriptError, TranscriptWarning, Usage

DATA = Path(__file__).resolve().parents[1] / "data" / "bedrock_logs"
TOOLS_1H = {"where": "tools", "index": None, "after": 1, "ttl": "1h"}
SYSTEM_5M = {"where": "system", "index": None, "after": 1, "ttl": None}


def at_message(i: int) -> dict[str, object]:
    return {"where": "message", "index": i, "after": 1, "ttl": None}


def read_quietly(path: Path) -> tuple[list[Conversation], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        convs = read_file(path)
    return convs, [str(w.message) for w in caught if w.category is TranscriptWarning]


def test_converse_records_grouped_by_prompt_extension() -> None:
    convs, _ = read_quietly(DATA / "converse.jsonl")
    assert [c.meta["request_ids"] for c in convs] == [["req-1", "req-2", "req-3"], ["req-b1"], ["req-2r"]]
    agent = convs[0]
    assert agent.replies == [1, 3, 5] and agent.id == "req-1"
    assert len(agent.system) == 1 and agent.system[0].text.startswith("You are the order desk assistant. Orders")
    assert [t["toolSpec"]["name"] for t in agent.tools] == ["get_order"]
    assert [(m.role, [(b.kind, b.text, b.id) for b in m.blocks]) for m in agent.messages] == [
        ("user", [("text", "Where is order 12?", "")]),
        ("assistant", [("text", "Let me look.", ""), ("tool_use", '{"id":"12"}', "tu_1")]),
        ("user", [("tool_result", '{"status":"shipped"}', "tu_1")]),
        ("assistant", [("text", "Order 12 has shipped.", "")]),
        ("user", [("text", "Thanks, and order 13?", "")]),
        ("assistant", [("text", "Order 13 is packed.", "")]),  # ConverseStream events put back together
    ]
    assert [agent.messages[i].usage for i in agent.replies] == [
        Usage(0, 0, 2487, 1519, 30),  # cacheDetails: 1,519 of the 2,487 written with the 1-hour TTL (the tools)
        Usage(0, 2487, 187, 0, 8),
        Usage(0, 2674, 18, 0, 6),  # from the stream's metadata event
    ]
    assert {agent.messages[i].model for i in agent.replies} == {"us.anthropic.claude-sonnet-4-5-20250929-v1:0"}
    assert [agent.messages[i].timestamp for i in agent.replies] == [1772442000.0, 1772442004.0, 1772442009.0]
    assert agent.meta["operations"] == ["Converse", "Converse", "ConverseStream"]
    assert agent.meta["format"] == "bedrock-invocation-log" and agent.meta["hidden_prefix"] is False


def test_cache_points_kept_where_the_caller_placed_them() -> None:
    convs, _ = read_quietly(DATA / "converse.jsonl")
    agent, other, retry = convs
    # one list per request; the message cache point sits after the last (only) block of the last user message
    assert agent.meta["cache_points"] == [
        [TOOLS_1H, SYSTEM_5M, at_message(0)],
        [TOOLS_1H, SYSTEM_5M, at_message(2)],
        [TOOLS_1H, SYSTEM_5M, at_message(4)],
    ]
    assert other.meta["cache_points"] == [[TOOLS_1H, SYSTEM_5M, at_message(0)]]
    # the cachePoint blocks themselves are not content: no message carries one
    assert all(b.kind != "cachePoint" for m in agent.messages for b in m.blocks)
    assert retry.meta["cache_points"] == [[TOOLS_1H, SYSTEM_5M, at_message(2)]]


def test_repeated_prompt_is_its_own_request_repeating_history() -> None:
    convs, _ = read_quietly(DATA / "converse.jsonl")
    retry = convs[2]
    assert retry.replies == [3] and retry.meta["shared_messages"] == 3
    assert retry.messages[3].usage == Usage(0, 2674, 0, 0, 8)
    assert retry.messages[1].usage is None  # history, not one of this conversation's calls


def test_failed_calls_and_other_bodies_skipped_with_one_warning_each() -> None:
    convs, messages = read_quietly(DATA / "converse.jsonl")
    assert sum(len(c.request_ends()) for c in convs) == 5  # 7 records: one without output, one Titan body
    name = DATA / "converse.jsonl"
    assert messages == [
        f"{name}:4: skipped records without an output body (failed or unfinished calls) (first here)",
        f"{name}:5: skipped InvokeModel records whose body is neither a Converse request nor an Anthropic "
        "Messages request (first here)",
    ]


def test_invoke_model_anthropic_bodies_in_a_json_array() -> None:
    [conv] = read_file(DATA / "invoke_anthropic.json")
    assert conv.meta["request_ids"] == ["inv-1", "inv-2"] and conv.replies == [1, 3]
    assert len(conv.system) == 1 and conv.system[0].text.startswith("You answer billing questions. Invoices")
    assert [(t["name"], t["input_schema"]) for t in conv.tools] == [("get_invoice", {"type": "object"})]
    assert "cache_control" not in conv.tools[0]
    assert conv.messages[1].blocks == (Block("tool_use", '{"n":7}', "get_invoice", "toolu_7"),)
    assert conv.messages[3].blocks == (Block("text", "Invoice 7 totals 40 EUR."),)  # streamed events joined
    assert conv.messages[1].usage == Usage(0, 0, 5730, 5723, 22)
    assert conv.messages[3].usage == Usage(0, 5730, 180, 0, 9)  # message_start usage, output from message_delta
    assert conv.meta["cache_points"] == [
        [
            {"where": "tools", "index": None, "after": 1, "ttl": "1h"},
            {"where": "system", "index": None, "after": 1, "ttl": "1h"},
            at_message(0),
        ],
        [
            {"where": "tools", "index": None, "after": 1, "ttl": "1h"},
            {"where": "system", "index": None, "after": 1, "ttl": "1h"},
            at_message(2),
        ],
    ]


def test_single_record_document(tmp_path: Path) -> None:
    [rec] = [json.loads(line) for line in (DATA / "converse.jsonl").read_text().splitlines()][:1]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(rec, indent=2))
    [conv] = read_file(path)
    assert conv.replies == [1] and conv.source == f"{path}:1"


def test_records_out_of_time_order_are_sorted(tmp_path: Path) -> None:
    lines = (DATA / "converse.jsonl").read_text().splitlines()
    path = tmp_path / "shuffled.jsonl"
    path.write_text("\n".join([lines[5], lines[2], lines[0]]) + "\n")
    [conv] = read_file(path)
    assert conv.meta["request_ids"] == ["req-1", "req-2", "req-3"]


@pytest.mark.parametrize(
    ("change", "line", "reason"),
    [
        (lambda r: r["input"]["inputBodyJson"]["messages"][0]["content"].append({"sound": {}}), 2, "'sound'"),
        (lambda r: r["input"]["inputBodyJson"]["messages"][0].update(role="robot"), 2, "role user or assistant"),
        (lambda r: r.pop("modelId"), 2, "without a modelId"),
    ],
)
def test_malformed_record_names_its_line(tmp_path: Path, change, line: int, reason: str) -> None:  # type: ignore[no-untyped-def]
    lines = (DATA / "converse.jsonl").read_text().splitlines()
    rec = json.loads(lines[1])
    change(rec)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(rec), lines[2]]) + "\n")
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert info.value.line == line and reason in info.value.reason


def test_malformed_record_in_a_json_array_names_its_line(tmp_path: Path) -> None:
    recs = json.loads((DATA / "invoke_anthropic.json").read_text())
    recs[1]["input"]["inputBodyJson"]["messages"][2]["content"][0]["type"] = "hologram"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(recs, indent=1))
    text = path.read_text().splitlines()
    expected = next(i for i, t in enumerate(text, start=1) if '"hologram"' in t) - 1  # the block's opening brace
    with pytest.raises(TranscriptError, match="unsupported content block type 'hologram'") as info:
        read_file(path)
    assert info.value.line == expected


def test_cli_invalid_json_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (DATA / "converse.jsonl").read_text().splitlines()
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join([lines[0], lines[1][:40]]) + "\n")
    assert main(["replay", str(path), "--out", str(tmp_path / "out"), "--no-chart"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"promptcache: error: {path}:2: invalid JSON on this line")


def test_cli_replays_an_invocation_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["replay", str(DATA / "converse.jsonl"), "--out", str(out), "--no-chart"]) == 0
    report = json.loads((out / "replay.json").read_text())
    assert (report["requests"], report["conversations"]) == (5, 3)
    assert capsys.readouterr().err.count("promptcache: warning: ") == 2


def test_gzip_file_as_s3_delivers_it(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "000001.json.gz"
    path.write_bytes(gzip.compress((DATA / "converse.jsonl").read_bytes()))
    convs, _ = read_quietly(path)
    assert [c.meta["request_ids"] for c in convs] == [["req-1", "req-2", "req-3"], ["req-b1"], ["req-2r"]]
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(gzip.compress(b"{}")[:12])
    with pytest.raises(TranscriptError, match="cannot decompress gzip file"):
        read_file(broken)


def test_nova_invoke_model_body_read_as_converse(tmp_path: Path) -> None:
    body = {
        "schemaVersion": "messages-v1",
        "system": [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}],
        "messages": [{"role": "user", "content": [{"text": "Capital of France?"}]}],
        "inferenceConfig": {"maxTokens": 50},
    }
    out = {
        "output": {"message": {"role": "assistant", "content": [{"text": "Paris."}]}},
        "stopReason": "end_turn",
        "usage": {
            "inputTokens": 7,
            "outputTokens": 2,
            "cacheReadInputTokenCount": 1100,
            "cacheWriteInputTokenCount": 0,
        },
    }
    rec = {
        "schemaType": "ModelInvocationLog",
        "schemaVersion": "1.0",
        "timestamp": "2026-03-02T12:00:00Z",
        "requestId": "nova-1",
        "operation": "InvokeModel",
        "modelId": "amazon.nova-pro-v1:0",
        "input": {"inputContentType": "application/json", "inputBodyJson": body, "inputTokenCount": 7},
        "output": {"outputContentType": "application/json", "outputBodyJson": out, "outputTokenCount": 2},
    }
    path = tmp_path / "nova.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    [conv] = read_file(path)
    assert conv.system == (Block("text", "Be brief."),)
    assert conv.messages[1].blocks == (Block("text", "Paris."),)
    assert conv.messages[1].usage == Usage(7, 1100, 0, 0, 2)
    assert conv.meta["cache_points"] == [[SYSTEM_5M]]
