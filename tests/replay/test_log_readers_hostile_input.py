"""Hostile and odd input for the Claude Code session reader and the Bedrock invocation-log reader.

Every log here is written by the test itself (small synthetic records shaped like Claude Code 2.1 session lines and
Bedrock ``ModelInvocationLog`` records). The rules checked: a malformed line is one ``FILE:LINE: reason`` error
(exit code 2 from the CLI, no traceback); a record type never seen before is skipped with one warning; valid but
odd input (cycles, missing parents, duplicate ids, odd numbers, BOM, CRLF, huge lines, deep nesting, gzip...)
reads without crashing, and nothing the log recorded is lost.
"""

from __future__ import annotations

import gzip
import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest

from promptcache._cli import main
from promptcache.replay._readers import read_conversations, read_file
from promptcache.replay._skipped import SkippedLines, skipping
from promptcache.replay._transcript import Block, Conversation, TranscriptError, TranscriptWarning, Usage

TS = "2026-03-02T10:00:0{}.000Z"


def user(uuid: str, parent: str | None, content: Any, sec: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "sessionId": "sess-h",
        "type": "user",
        "message": {"role": "user", "content": content},
        "uuid": uuid,
        "timestamp": TS.format(sec),
        **extra,
    }


def assistant(
    uuid: str,
    parent: str | None,
    req: str,
    content: Any,
    usage: Any = None,
    model: str = "claude-opus-4-6",
    sec: int = 2,
) -> dict[str, Any]:
    message: dict[str, Any] = {"model": model, "id": f"msg_{req}", "role": "assistant", "content": content}
    if usage is not None:
        message["usage"] = usage
    return {
        "parentUuid": parent,
        "sessionId": "sess-h",
        "type": "assistant",
        "requestId": req,
        "message": message,
        "uuid": uuid,
        "timestamp": TS.format(sec),
    }


USAGE = {"input_tokens": 3, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 10, "output_tokens": 7}


def write_jsonl(path: Path, records: list[Any], sep: str = "\n") -> Path:
    path.write_text(sep.join(r if isinstance(r, str) else json.dumps(r) for r in records) + sep)
    return path


def simple(tmp_path: Path, name: str = "s.jsonl") -> Path:
    return write_jsonl(
        tmp_path / name,
        [user("u1", None, "Hello"), assistant("a1", "u1", "r1", [{"type": "text", "text": "Hi"}], USAGE)],
    )


def shape(conv: Conversation) -> list[tuple[str, list[tuple[str, str]]]]:
    return [(m.role, [(b.kind, b.text) for b in m.blocks]) for m in conv.messages]


def cli(tmp_path: Path, *paths: Path, capsys: pytest.CaptureFixture[str], strict: bool = False) -> tuple[int, str]:
    extra = ["--strict"] if strict else []
    code = main(["replay", *map(str, paths), "--out", str(tmp_path / "out"), "--no-chart", *extra])
    return code, capsys.readouterr().err


# --- malformed lines: one error naming file and line, exit 2 ---------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("{not json", "invalid JSON on this line"),
        ("[1, 2]", "expected a Claude Code record (a JSON object), got [1,2]"),
        ('"just a string"', "expected a Claude Code record (a JSON object), got 'just a string'"),
    ],
)
def test_malformed_claude_code_line_is_one_line_error_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str, reason: str
) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [user("u1", None, "Hello"), bad, assistant("a1", "u1", "r1", "Hi")])
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert str(info.value).startswith(f"{path}:2: {reason}")
    code, err = cli(tmp_path, path, capsys=capsys, strict=True)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(f"promptcache: error: {path}:2: {reason}")
    assert "Traceback" not in err


def test_non_utf8_bytes_on_a_line_name_that_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.jsonl"
    good = json.dumps(user("u1", None, "Hello")).encode()
    bad = json.dumps(assistant("a1", "u1", "r1", "caf\u00e9")).encode().replace(b"\\u00e9", b"\xe9")
    path.write_bytes(good + b"\n" + bad + b"\n")
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert str(info.value).startswith(f"{path}:2: invalid JSON on this line")
    code, err = cli(tmp_path, path, capsys=capsys)
    assert (code, err.count("\n"), "Traceback" in err) == (2, 1, False)


# --- record types never seen: skipped with one warning -----------------------------------------------------------


def test_unknown_record_types_warn_once_per_type_and_are_skipped(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "new.jsonl",
        [
            {"type": "custom-title", "customTitle": "x", "sessionId": "sess-h"},
            user("u1", None, "Hello"),
            {"type": "custom-title", "customTitle": "y"},
            {"type": "agent-name", "uuid": "n1", "parentUuid": "u1"},
            assistant("a1", "u1", "r1", "Hi", USAGE),
        ],
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        [conv] = read_file(path)
    messages = [str(w.message) for w in caught if issubclass(w.category, TranscriptWarning)]
    assert messages == [
        f"{path}:1: skipped records of unknown type 'custom-title' (first on this line)",
        f"{path}:4: skipped records of unknown type 'agent-name' (first on this line)",
    ]
    assert shape(conv) == [("user", [("text", "Hello")]), ("assistant", [("text", "Hi")])]


def test_record_type_that_is_not_a_string_is_an_unknown_type(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "oddtype.jsonl",
        [
            user("u1", None, "Hello"),
            {**user("x1", "u1", "?"), "type": ["user"]},
            {**user("x2", "u1", "?"), "type": {"t": 1}},
            assistant("a1", "u1", "r1", "Hi", USAGE),
        ],
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        [conv] = read_file(path)
    assert [str(w.message) for w in caught if issubclass(w.category, TranscriptWarning)] == [
        f'{path}:2: skipped records of unknown type ["user"] (first on this line)',
        f'{path}:3: skipped records of unknown type {{"t":1}} (first on this line)',
    ]
    assert shape(conv) == [("user", [("text", "Hello")]), ("assistant", [("text", "Hi")])]


def test_many_leading_summary_records_still_read_as_a_claude_code_log(tmp_path: Path) -> None:
    """A resumed session starts with one ``summary`` line per earlier compaction; there can be many."""
    summaries = [{"type": "summary", "summary": f"Part {i}", "leafUuid": f"leaf{i}"} for i in range(80)]
    path = write_jsonl(
        tmp_path / "resumed.jsonl",
        [
            *summaries,
            user("u1", None, "Hello"),
            assistant("a1", "u1", "r1", "Hi", USAGE),
            user("u2", "a1", "More"),
            assistant("a2", "u2", "r2", "Sure", USAGE),
        ],
    )
    [conv] = read_file(path)
    assert conv.meta["format"] == "claude-code"
    assert conv.meta["request_ids"] == ["r1", "r2"]
    assert conv.id == "sess-h"


# --- valid but odd Claude Code input -----------------------------------------------------------------------------


def test_empty_file_and_blank_lines_only_are_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, data in (("empty.jsonl", b""), ("blank.jsonl", b"\n\r\n  \n")):
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(TranscriptError) as info:
            read_file(path)
        assert str(info.value) == f"{path}:1: empty file: no conversations"
        code, err = cli(tmp_path, path, capsys=capsys)
        assert (code, err) == (2, f"promptcache: error: {path}:1: empty file: no conversations\n")


def test_session_of_only_bookkeeping_records_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(
        tmp_path / "idle.jsonl",
        [
            {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}},
            {"type": "summary", "summary": "s", "leafUuid": "x"},
            {"type": "progress", "uuid": "p1", "parentUuid": None, "data": {}, "timestamp": TS.format(1)},
            {"type": "system", "subtype": "compact_boundary", "uuid": "b1", "parentUuid": None},
        ],
    )
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert str(info.value) == f"{path}: no API calls (assistant records) in the log"
    code, err = cli(tmp_path, path, capsys=capsys)
    assert (code, err) == (2, f"promptcache: error: {path}: no API calls (assistant records) in the log\n")


def test_cycle_in_parent_uuid_stops_before_the_call_itself(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "cycle.jsonl",
        [user("u1", "a1", "Hello"), assistant("a1", "u1", "r1", "Hi", USAGE)],
    )
    [conv] = read_file(path)
    assert shape(conv) == [("user", [("text", "Hello")]), ("assistant", [("text", "Hi")])]
    assert conv.replies == [1]


def test_self_parent_assistant_line_is_not_its_own_prompt(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "self.jsonl", [user("u1", None, "Q"), assistant("a1", "a1", "r1", "Hi", USAGE)])
    convs = read_file(path)
    assert [shape(c) for c in convs] == [[("assistant", [("text", "Hi")])]]
    assert [c.replies for c in convs] == [[0]]


def test_parent_uuid_pointing_to_a_missing_record(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "orphan.jsonl",
        [user("u1", "gone", "Hello"), assistant("a1", "u1", "r1", "Hi", USAGE)],
    )
    [conv] = read_file(path)
    assert conv.meta["context_start"] == "missing_parent"
    assert shape(conv) == [("user", [("text", "Hello")]), ("assistant", [("text", "Hi")])]


def test_duplicate_uuid_keeps_the_first_record(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "dup.jsonl",
        [
            user("u1", None, "Hello"),
            user("u1", None, "Hello"),
            assistant("a1", "u1", "r1", "Hi", USAGE),
            assistant("a1", "u1", "r1", "Hi", USAGE),
        ],
    )
    [conv] = read_file(path)
    assert shape(conv) == [("user", [("text", "Hello")]), ("assistant", [("text", "Hi")])]
    assert conv.meta["request_ids"] == ["r1"]


def test_request_id_reused_by_two_models_is_two_calls(tmp_path: Path) -> None:
    small = {"input_tokens": 1, "output_tokens": 2}
    path = write_jsonl(
        tmp_path / "reuse.jsonl",
        [
            user("u1", None, "Hello"),
            assistant("a1", "u1", "rX", "Hi", USAGE, model="claude-opus-4-6"),
            user("u2", "a1", "Again"),
            assistant("a2", "u2", "rX", "Hello again", small, model="claude-haiku-4-5"),
        ],
    )
    [conv] = read_file(path)
    assert shape(conv) == [
        ("user", [("text", "Hello")]),
        ("assistant", [("text", "Hi")]),
        ("user", [("text", "Again")]),
        ("assistant", [("text", "Hello again")]),
    ]
    assert conv.replies == [1, 3]
    assert [conv.messages[i].model for i in conv.replies] == ["claude-opus-4-6", "claude-haiku-4-5"]
    assert [conv.messages[i].usage for i in conv.replies] == [Usage(3, 100, 10, 0, 7), Usage(1, 0, 0, 0, 2)]


def test_tool_result_without_a_tool_use_is_kept_as_user_content(tmp_path: Path) -> None:
    result = [{"type": "tool_result", "tool_use_id": "toolu_none", "content": "stray"}]
    path = write_jsonl(
        tmp_path / "stray.jsonl",
        [user("u1", None, "Hello"), user("u2", "u1", result), assistant("a1", "u2", "r1", "Hi", USAGE)],
    )
    [conv] = read_file(path)
    assert [(m.role, [(b.kind, b.text, b.id) for b in m.blocks]) for m in conv.messages] == [
        ("user", [("text", "Hello", "")]),
        ("user", [("tool_result", "stray", "toolu_none")]),
        ("assistant", [("text", "Hi", "")]),
    ]


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"input_tokens": 2**32 - 1, "output_tokens": 4}, Usage(2**32 - 1, 0, 0, 0, 4)),
        ({"input_tokens": 5.0, "output_tokens": 4, "cache_read_input_tokens": None}, Usage(5, 0, 0, 0, 4)),
        ({}, Usage(0, 0, 0, 0, 0)),
    ],
)
def test_odd_usage_numbers_read_as_documented(tmp_path: Path, usage: Any, expected: Usage | None) -> None:
    path = write_jsonl(tmp_path / "u.jsonl", [user("u1", None, "Hello"), assistant("a1", "u1", "r1", "Hi", usage)])
    [conv] = read_file(path)
    assert conv.messages[1].usage == expected


@pytest.mark.parametrize(
    ("usage", "reason"),
    [
        ({"input_tokens": -5, "output_tokens": "12"}, "message.usage.input_tokens must be a token count"),
        ({"input_tokens": 10**30, "output_tokens": 4}, "message.usage.input_tokens must be a token count"),
        ({"input_tokens": 5.0, "output_tokens": 4.5}, "message.usage.output_tokens must be a token count"),
        ({"cache_creation": "lots", "input_tokens": 1}, "message.usage.cache_creation must be an object"),
        ({"input_tokens": True}, "message.usage.input_tokens must be a token count"),
        ("not an object", "message.usage must be an object of token counts"),
    ],
)
def test_usage_that_is_not_token_counts_is_an_error_naming_the_field(tmp_path: Path, usage: Any, reason: str) -> None:
    path = write_jsonl(tmp_path / "u.jsonl", [user("u1", None, "Hello"), assistant("a1", "u1", "r1", "Hi", usage)])
    with pytest.raises(TranscriptError, match=rf"^{path}:2: {reason}"):
        read_file(path)


def test_missing_usage_is_none_and_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "nousage.jsonl", [user("u1", None, "Hello"), assistant("a1", "u1", "r1", "Hi")])
    [conv] = read_file(path)
    assert conv.messages[1].usage is None
    code, err = cli(tmp_path, path, capsys=capsys)
    assert (code, "Traceback" in err) == (0, False)


def test_bom_at_the_start_of_a_log_is_a_line_1_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """JSON forbids writing a BOM; the readers report it (as for every other format) rather than guess."""
    path = simple(tmp_path)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    reason = "invalid JSON on this line: UTF-8 byte order mark (BOM) is not supported"
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert str(info.value) == f"{path}:1: {reason}"
    code, err = cli(tmp_path, path, capsys=capsys)
    assert (code, err) == (2, f"promptcache: error: {path}:1: {reason}\n")


def test_crlf_line_endings(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "crlf.jsonl",
        [user("u1", None, "Hello"), "{broken", assistant("a1", "u1", "r1", "Hi", USAGE)],
        sep="\r\n",
    )
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert str(info.value).startswith(f"{path}:2: invalid JSON")
    write_jsonl(path, [user("u1", None, "Hello"), assistant("a1", "u1", "r1", "Hi", USAGE)], sep="\r\n")
    [conv] = read_file(path)
    assert shape(conv) == [("user", [("text", "Hello")]), ("assistant", [("text", "Hi")])]


def test_a_50_mb_line_is_read_whole(tmp_path: Path) -> None:
    big = "x" * (50 * 1024 * 1024)
    path = write_jsonl(tmp_path / "big.jsonl", [user("u1", None, big), assistant("a1", "u1", "r1", "Hi", USAGE)])
    [conv] = read_file(path)
    assert len(conv.messages[0].blocks[0].text) == 50 * 1024 * 1024
    assert conv.replies == [1]


def test_deeply_nested_tool_input_is_replayed_not_a_crash(tmp_path: Path) -> None:
    deep: Any = "leaf"
    for _ in range(600):
        deep = {"k": deep}
    use = [{"type": "tool_use", "id": "toolu_1", "name": "Deep", "input": deep}]
    path = write_jsonl(tmp_path / "deep.jsonl", [user("u1", None, "Go"), assistant("a1", "u1", "r1", use, USAGE)])
    [conv] = read_file(path)
    [block] = conv.messages[1].blocks
    assert (block.kind, block.name, block.id) == ("tool_use", "Deep", "toolu_1")
    assert block.text == '{"k":' * 600 + '"leaf"' + "}" * 600


def test_nesting_past_the_parser_limit_is_a_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deeper.jsonl"
    deep = '{"k":' * 2000 + "1" + "}" * 2000
    line = json.dumps(user("u1", None, "Go")).replace('"Go"', f'[{{"type": "text", "text": "x", "extra": {deep}}}]')
    path.write_text(json.dumps(user("u0", None, "Hi")) + "\n" + line + "\n")
    code, err = cli(tmp_path, path, capsys=capsys, strict=True)
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"promptcache: error: {path}:2: invalid JSON")


def test_unknown_content_block_type_is_a_line_error_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    block = [{"type": "hologram", "data": "?"}]
    path = write_jsonl(tmp_path / "blk.jsonl", [user("u1", None, "Hello"), assistant("a1", "u1", "r1", block)])
    code, err = cli(tmp_path, path, capsys=capsys)
    assert (code, err) == (2, f"promptcache: error: {path}:2: unsupported content block type 'hologram'\n")


def test_odd_timestamps_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = [user("u1", None, "Hello"), assistant("a1", "u1", "r1", "Hi", USAGE)]
    records[0]["timestamp"] = 1e300
    records[1]["timestamp"] = -5
    path = write_jsonl(tmp_path / "ts.jsonl", records)
    with pytest.warns(TranscriptWarning) as caught:
        [conv] = read_file(path)
    assert [m.timestamp for m in conv.messages] == [None, None]  # outside 1970..9999: no logged time
    assert str(caught[0].message) == (
        f"{path}: ignored 2 timestamps far outside the rest of the log (first: 1e+297 s after the epoch; 0 kept); "
        "those messages are replayed as untimed, so they do not set the log's time span"
    )
    code, err = cli(tmp_path, path, capsys=capsys)
    assert (code, "Traceback" in err) == (0, False)


def test_assistant_root_with_no_prompt_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(
        tmp_path / "root.jsonl",
        [assistant("a1", None, "r1", "Hi", USAGE), user("u1", "a1", "Q"), assistant("a2", "u1", "r2", "A", USAGE)],
    )
    [conv] = read_file(path)
    assert conv.replies == [0, 2] and conv.request_ends() == [2]
    code, err = cli(tmp_path, path, capsys=capsys)
    assert (code, "Traceback" in err) == (0, False)


def test_folder_with_no_logs_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "nothing"
    (folder / "subagents").mkdir(parents=True)
    (folder / "notes.txt").write_text("hi")
    code, err = cli(tmp_path, folder, capsys=capsys)
    assert code == 2
    assert err == (
        f"promptcache: error: {folder}: is a directory holding no Claude Code sessions: a directory is read only as "
        "Claude Code sessions, a folder of project folders (~/.claude/projects, every session of every project in "
        "one run), one project folder (session logs <id>.jsonl, as in ~/.claude/projects/<project>/) or one "
        "session's folder (<id>/ beside <id>.jsonl, or holding subagents/agent-*.jsonl)\n"
    )


def test_symlink_loops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loop = tmp_path / "loop.jsonl"
    os.symlink(loop, loop)
    with pytest.raises(TranscriptError) as info:
        read_file(loop)
    assert str(info.value) == f"{loop}: cannot read file: Too many levels of symbolic links"
    # a session folder whose sub-agent log is a symlink loop and whose subagents folder links to itself
    session = tmp_path / "sess"
    (session / "subagents").mkdir(parents=True)
    simple(tmp_path, "sess.jsonl")
    os.symlink(session / "subagents" / "agent-a1.jsonl", session / "subagents" / "agent-a1.jsonl")
    os.symlink(session / "subagents", session / "subagents" / "self")
    code, err = cli(tmp_path, session, capsys=capsys)
    assert code == 2
    assert err == (
        f"promptcache: error: {session / 'subagents' / 'agent-a1.jsonl'}: cannot read file: "
        "Too many levels of symbolic links\n"
    )


def test_an_empty_sub_agent_log_in_a_session_folder_is_skipped_with_a_warning(tmp_path: Path) -> None:
    session = tmp_path / "sess-h"
    (session / "subagents").mkdir(parents=True)
    simple(tmp_path, "sess-h.jsonl")
    empty = session / "subagents" / "agent-a1.jsonl"
    empty.write_bytes(b"")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        [conv] = read_file(session)
    assert [str(w.message) for w in caught if issubclass(w.category, TranscriptWarning)] == [
        f"{empty}: skipped an empty sub-agent log"
    ]
    assert shape(conv) == [("user", [("text", "Hello")]), ("assistant", [("text", "Hi")])]


def test_a_named_pipe_and_a_socket_among_sub_agent_logs_are_skipped_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    session = tmp_path / "sess-h"
    agents = session / "subagents"
    agents.mkdir(parents=True)
    simple(tmp_path, "sess-h.jsonl")
    os.mkfifo(agents / "agent-a1.jsonl")
    sock = socket.socket(socket.AF_UNIX)
    try:
        monkeypatch.chdir(agents)  # a relative name: a socket path has at most 107 bytes
        sock.bind("agent-a2.jsonl")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            [conv] = read_file(session)
    finally:
        sock.close()
    assert [str(w.message) for w in caught if issubclass(w.category, TranscriptWarning)] == [
        f"{agents}: skipped 2 entries named like a sub-agent log that are not regular files (a pipe, a device, a "
        "broken link: agent-a1.jsonl and 1 more)"
    ]
    assert shape(conv) == [("user", [("text", "Hello")]), ("assistant", [("text", "Hi")])]


def test_a_document_in_a_tool_result_is_kept_as_a_placeholder(tmp_path: Path) -> None:
    use = [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.pdf"}}]
    pdf = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}}
    result = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "a.pdf"}, pdf]}]
    path = write_jsonl(
        tmp_path / "pdf.jsonl",
        [
            user("u1", None, "Read a.pdf"),
            assistant("a1", "u1", "r1", use, USAGE),
            user("u2", "a1", result, sec=3),
            assistant("a2", "u2", "r2", "Done", USAGE, sec=4),
        ],
    )
    [conv] = read_file(path)
    assert [(b.kind, b.text, b.id) for b in conv.messages[2].blocks] == [
        ("tool_result", "a.pdf\n[document]", "toolu_1")
    ]


def test_truncated_gzip_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = gzip.compress(simple(tmp_path).read_bytes())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert str(info.value).startswith(f"{path}: cannot decompress gzip file: ")
    code, err = cli(tmp_path, path, capsys=capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    whole = tmp_path / "whole.jsonl.gz"
    whole.write_bytes(data)
    [conv] = read_file(whole)
    assert shape(conv) == [("user", [("text", "Hello")]), ("assistant", [("text", "Hi")])]


# --- Bedrock model invocation logs -------------------------------------------------------------------------------


def record(
    req: str = "req-1",
    body: Any = None,
    out: Any = None,
    operation: str = "Converse",
    **extra: Any,
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "schemaType": "ModelInvocationLog",
        "schemaVersion": "1.0",
        "timestamp": "2026-03-02T09:00:00Z",
        "requestId": req,
        "operation": operation,
        "modelId": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    }
    if body is not ...:
        rec["input"] = {
            "inputContentType": "application/json",
            "inputBodyJson": body
            if body is not None
            else {"messages": [{"role": "user", "content": [{"text": "Where is order 12?"}]}]},
            "inputTokenCount": 12,
        }
    if out is not ...:
        rec["output"] = {
            "outputContentType": "application/json",
            "outputBodyJson": out
            if out is not None
            else {
                "output": {"message": {"role": "assistant", "content": [{"text": "Shipped."}]}},
                "usage": {"inputTokens": 12, "outputTokens": 3},
            },
            "outputTokenCount": 3,
        }
    rec.update(extra)
    return rec


def bedrock_shape(conv: Conversation) -> list[tuple[str, list[tuple[str, str]]]]:
    return shape(conv)


def read_bedrock(tmp_path: Path, *records: Any) -> tuple[list[Conversation], list[str]]:
    path = write_jsonl(tmp_path / "inv.jsonl", list(records))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        convs = read_file(path)
    return convs, [str(w.message) for w in caught if issubclass(w.category, TranscriptWarning)]


def test_bedrock_records_without_input_or_output_are_skipped_with_one_warning_each(tmp_path: Path) -> None:
    convs, warned = read_bedrock(
        tmp_path, record("a", body=...), record("b", out=...), record("c", out=...), record("d")
    )
    path = tmp_path / "inv.jsonl"
    assert warned == [
        f"{path}:1: skipped records without an inline input.inputBodyJson (large bodies go to S3) (first here)",
        f"{path}:2: skipped records without an output body (failed or unfinished calls) (first here)",
    ]
    assert [c.meta["request_ids"] for c in convs] == [["d"]]


def test_a_bedrock_record_logged_twice_is_one_request(tmp_path: Path) -> None:
    other = record("b")
    other["input"]["inputBodyJson"]["messages"][0]["content"][0]["text"] = "Where is order 13?"
    convs, warned = read_bedrock(tmp_path, record("a"), record("a"), other, record("a"))
    assert warned == [f"{tmp_path / 'inv.jsonl'}:2: skipped records logged twice (the same record again) (first here)"]
    assert [c.meta["request_ids"] for c in convs] == [["a"], ["b"]]


def test_bedrock_records_sharing_a_request_id_but_not_content_are_both_kept(tmp_path: Path) -> None:
    other = record("a")
    other["input"]["inputBodyJson"]["messages"][0]["content"][0]["text"] = "Where is order 13?"
    convs, warned = read_bedrock(tmp_path, record("a"), other)
    assert warned == []
    assert [c.meta["request_ids"] for c in convs] == [["a"], ["a"]]


def test_bedrock_file_of_only_failed_calls_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "inv.jsonl", [record("a", out=...)])
    code, err = cli(tmp_path, path, capsys=capsys)
    assert code == 2
    assert err.splitlines() == [  # the warning first, then the error
        f"promptcache: warning: {path}:1: skipped records without an output body (failed or unfinished calls) "
        "(first here)",
        f"promptcache: error: {path}:1: no model invocation with a prompt and a reply in the file",
    ]


def test_bedrock_bodies_logged_as_json_strings_are_read(tmp_path: Path) -> None:
    body = json.dumps({"messages": [{"role": "user", "content": [{"text": "Where is order 12?"}]}]})
    out = json.dumps(
        {
            "output": {"message": {"role": "assistant", "content": [{"text": "Shipped."}]}},
            "usage": {"inputTokens": 12, "outputTokens": 3},
        }
    )
    convs, warned = read_bedrock(tmp_path, record("s", body=body, out=out))
    assert warned == []
    [conv] = convs
    assert bedrock_shape(conv) == [("user", [("text", "Where is order 12?")]), ("assistant", [("text", "Shipped.")])]
    assert conv.messages[1].usage == Usage(12, 0, 0, 0, 3)


def test_bedrock_body_string_that_is_not_json_is_a_line_error(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "inv.jsonl", [record("ok"), record("s", body="{truncated")])
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert str(info.value).startswith(f"{path}:2: input.inputBodyJson is a string that is not JSON")


def test_bedrock_unknown_operation_names_are_kept(tmp_path: Path) -> None:
    convs, warned = read_bedrock(tmp_path, record("x", operation="ConverseFuture2030"), record("y", operation=""))
    assert warned == []
    assert [c.meta["operations"] for c in convs] == [["ConverseFuture2030"], [""]]


@pytest.mark.parametrize(
    "events",
    [
        [],
        [{"contentBlockDelta": {"delta": {"text": "Ship"}, "contentBlockIndex": "0"}}],
        [{"contentBlockDelta": {"delta": "text?", "contentBlockIndex": None}}],
        [{"contentBlockStart": {"start": "tool?", "contentBlockIndex": "x"}}],
        [{"metadata": {"usage": "lots"}}, None, 5, "event"],
    ],
)
def test_converse_stream_with_missing_or_odd_events_does_not_crash(tmp_path: Path, events: list[Any]) -> None:
    convs, warned = read_bedrock(tmp_path, record("st", operation="ConverseStream", out=events))
    [conv] = convs
    assert conv.meta["operations"] == ["ConverseStream"]
    assert conv.messages[1].role == "assistant"
    assert conv.messages[1].usage == Usage(12, 0, 0, 0, 3)  # the record's own counts


def test_converse_stream_text_index_as_string_keeps_the_text(tmp_path: Path) -> None:
    events = [
        {"contentBlockDelta": {"delta": {"text": "Ship"}, "contentBlockIndex": "0"}},
        {"contentBlockDelta": {"delta": {"text": "ped."}, "contentBlockIndex": 0}},
    ]
    [conv], _ = read_bedrock(tmp_path, record("st", operation="ConverseStream", out=events))
    assert conv.messages[1].blocks == (Block("text", "Shipped."),)


@pytest.mark.parametrize(
    "events",
    [
        [],
        [{"type": "message_start", "message": {"usage": ["odd"]}}],
        [{"type": "content_block_start", "index": "a", "content_block": {"type": "text", "text": "x"}}],
        [{"type": "content_block_delta", "index": None, "delta": {"type": "text_delta", "text": "x"}}],
        [{"type": "message_delta", "usage": {"output_tokens": "9"}}, 7, None],
    ],
)
def test_anthropic_stream_with_missing_or_odd_events_does_not_crash(tmp_path: Path, events: list[Any]) -> None:
    body = {"anthropic_version": "bedrock-2023-05-31", "messages": [{"role": "user", "content": "Hi"}]}
    with skipping(SkippedLines()) as tally:  # a count that is not one ("9"): the usage is dropped and counted
        convs, _ = read_bedrock(
            tmp_path, record("an", body=body, out=events, operation="InvokeModelWithResponseStream")
        )
    [conv] = convs
    assert conv.messages[0].blocks == (Block("text", "Hi"),)
    assert conv.messages[1].role == "assistant"
    bad = any(isinstance(e, dict) and e.get("usage") == {"output_tokens": "9"} for e in events)
    assert (tally.bad_usage, conv.messages[1].usage is None) == ((1, True) if bad else (0, False))


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (
            {"messages": [{"role": "user", "content": [{"text": "Hi"}]}], "toolConfig": {"tools": True}},
            "toolConfig.tools must be a list of tools, got true",
        ),
        (
            {"messages": [{"role": "user", "content": [{"toolResult": {"toolUseId": "t", "content": 5}}]}]},
            "toolResult content must be a list, got 5",
        ),
        (
            {"messages": [{"role": "user", "content": [{"toolResult": {"toolUseId": "t", "content": "done"}}]}]},
            "toolResult content must be a list, got 'done'",
        ),
    ],
)
def test_converse_fields_of_the_wrong_shape_are_line_errors(tmp_path: Path, body: Any, reason: str) -> None:
    path = write_jsonl(tmp_path / "inv.jsonl", [record("a"), record("b", body=body)])
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert str(info.value) == f"{path}:2: {reason}"


def test_bedrock_json_array_with_a_bad_second_record_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "inv.json"
    path.write_text("[\n" + json.dumps(record("a")) + ",\n" + json.dumps({"schemaType": "Other"}) + "\n]\n")
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert str(info.value) == f'{path}:3: expected a ModelInvocationLog record, got {{"schemaType":"Other"}}'


def test_bedrock_message_not_an_object_is_a_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "inv.jsonl", [record("a", body={"messages": ["hello"]})])
    code, err = cli(tmp_path, path, capsys=capsys)
    assert (code, err.count("\n"), "Traceback" in err) == (2, 1, False)
    assert err.startswith(f"promptcache: error: {path}:1: ")


def test_bedrock_anthropic_messages_with_non_object_items_is_a_line_error(tmp_path: Path) -> None:
    body = {"anthropic_version": "bedrock-2023-05-31", "messages": [{"role": "user", "content": "Hi"}, 5]}
    path = write_jsonl(tmp_path / "inv.jsonl", [record("a", body=body)])
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert str(info.value) == f"{path}:1: a message must be an object, got 5"


def test_two_hostile_files_together_name_the_bad_one(tmp_path: Path) -> None:
    good = simple(tmp_path, "good.jsonl")
    bad = write_jsonl(tmp_path / "bad.jsonl", [record("a", body={"messages": [{"role": "robot", "content": []}]})])
    with pytest.raises(TranscriptError) as info:
        read_conversations([good, bad])
    assert str(info.value).startswith(f"{bad}:1: a Converse message needs role user or assistant")
