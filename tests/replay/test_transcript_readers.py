"""Transcript readers: OpenAI, Anthropic (JSON and JSONL event logs), LangChain; malformed input names file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage, messages_to_dict

from promptcache.replay._readers import read_conversations, read_file
from promptcache.replay._transcript import Block, TranscriptError


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_openai_chat_messages_with_tool_calls(tmp_path: Path) -> None:
    conv = {
        "id": "o1",
        "user_id": "u7",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
            {"role": "assistant", "content": "18C in Paris."},
        ],
    }
    [c] = read_file(write(tmp_path, "o.json", json.dumps([conv])))
    assert (c.id, c.family) == ("o1", "user:u7")
    assert c.system == (Block("text", "be brief"),)
    assert [m.role for m in c.messages] == ["user", "assistant", "tool", "assistant"]
    assert c.messages[1].blocks == (Block("tool_use", '{"city":"Paris"}', "weather", "call_1"),)
    assert c.messages[2].blocks == (Block("tool_result", "18C", id="call_1"),)
    assert c.request_ends() == [1, 3]


def test_anthropic_messages_with_tool_use_and_tool_result_blocks(tmp_path: Path) -> None:
    doc = {
        "system": [{"type": "text", "text": "sys"}],
        "messages": [
            {"role": "user", "content": "find order 12"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "looking"},
                    {"type": "tool_use", "id": "tu_1", "name": "get_order", "input": {"id": 12}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "tu_1",
                        "content": [{"type": "text", "text": "shipped"}],
                        "is_error": False,
                    }
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "It shipped."}]},
        ],
    }
    [c] = read_file(write(tmp_path, "a.json", json.dumps(doc)))
    assert c.system == (Block("text", "sys"),)
    assert c.messages[1].blocks == (Block("text", "looking"), Block("tool_use", '{"id":12}', "get_order", "tu_1"))
    assert c.messages[2].role == "user"
    assert c.messages[2].blocks == (Block("tool_result", "shipped", id="tu_1"),)
    assert c.id == "a.json#0" and c.family == "a.json#0"


def test_anthropic_jsonl_event_log_grouped_by_session(tmp_path: Path) -> None:
    lines = [
        {"type": "summary", "summary": "ignored"},
        {
            "type": "user",
            "sessionId": "s1",
            "timestamp": "2025-01-01T00:00:00Z",
            "message": {"role": "user", "content": "hi"},
        },
        {
            "type": "user",
            "sessionId": "s2",
            "timestamp": "2025-01-01T00:00:05Z",
            "message": {"role": "user", "content": "other"},
        },
        {
            "type": "assistant",
            "sessionId": "s1",
            "timestamp": "2025-01-01T00:00:02Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
        },
    ]
    path = write(tmp_path, "log.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")
    s1, s2 = read_file(path)
    assert (s1.id, s2.id) == ("s1", "s2")
    assert [m.role for m in s1.messages] == ["user", "assistant"]
    assert s1.messages[0].timestamp == 1735689600.0 and s1.messages[1].timestamp == 1735689602.0
    assert s1.source == f"{path}:2"


def test_langchain_messages_to_dict(tmp_path: Path) -> None:
    messages = [
        SystemMessage("sys"),
        HumanMessage("add 2 and 3"),
        AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "t1"}]),
        ToolMessage("5", tool_call_id="t1", status="error"),
        AIMessage("5"),
    ]
    [c] = read_file(write(tmp_path, "lc.json", json.dumps(messages_to_dict(messages))))
    assert [m.role for m in c.messages] == ["user", "assistant", "tool", "assistant"]
    assert c.messages[1].blocks == (Block("tool_use", '{"a":2,"b":3}', "add", "t1"),)
    assert c.messages[2].blocks[0].is_error is True


def test_tau_bench_layout_reads_ids_and_families(tmp_path: Path) -> None:
    rec = {
        "task_id": 3,
        "trial": 1,
        "reward": 1.0,
        "info": {"task": {"user_id": "mia_1"}},
        "traj": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    }
    [c] = read_file(write(tmp_path, "t.json", json.dumps([rec])))
    assert (c.id, c.family, c.meta["trial"]) == ("task3-trial1", "user:mia_1", 1)


def test_several_files_in_order(tmp_path: Path) -> None:
    a = write(tmp_path, "a.json", json.dumps([{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]))
    b = write(tmp_path, "b.json", json.dumps([{"role": "user", "content": "z"}, {"role": "assistant", "content": "w"}]))
    assert [c.id for c in read_conversations([a, b])] == ["a.json#0", "b.json#0"]


BAD_ROLE = """[
  {"messages": [
    {"role": "user", "content": "hi"},
    {"role": "robot", "content": "beep"}
  ]}
]
"""


@pytest.mark.parametrize(
    ("name", "text", "line", "needle"),
    [
        ("bad_role.json", BAD_ROLE, 4, "unknown message role/type 'robot'"),
        ("syntax.json", '[\n {"role": "user",\n  "content": }\n]', 3, "invalid JSON"),
        (
            "block.json",
            '[\n{"role": "user", "content": "a"},\n{"role": "assistant",\n "content": [{"type": "video"}]}\n]',
            4,
            "unsupported content block type 'video'",
        ),
        ("log.jsonl", '{"role": "user", "content": "a"}\n{"role": "user", "content": 5}\n', 2, "content must be"),
        ("nomsgs.json", '[{"id": 1}]', 1, "no message list"),
        ("empty.json", "  \n", 1, "empty file"),
    ],
)
def test_malformed_input_names_file_and_line(tmp_path: Path, name: str, text: str, line: int, needle: str) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    err = info.value
    assert (err.path, err.line) == (str(path), line)
    assert needle in err.reason
    assert str(err) == f"{path}:{line}: {err.reason}" and "\n" not in str(err)


def test_missing_file_and_directory_name_the_path_without_a_line(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError) as info:
        read_file(tmp_path / "nope.json")
    assert str(info.value) == f"{tmp_path / 'nope.json'}: no such file"
    with pytest.raises(TranscriptError) as info:
        read_file(tmp_path)
    assert str(info.value) == f"{tmp_path}: is a directory; give the transcript files in it (e.g. {tmp_path}/*.json)"


@pytest.mark.parametrize("name", ["notes.txt", "data.csv", "log.jsonl"])
def test_a_file_that_is_not_json_at_all(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("a,b\n1,2\n")
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert str(info.value) == (
        f"{path}:1: not a JSON or JSONL transcript (invalid JSON: unexpected character, expected a JSON value)"
    )
