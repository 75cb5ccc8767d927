"""Adversarial input for ``promptcache replay``: every bad input must give exit code 2 and one stderr line naming
the file and line (or the bad option value) — never a traceback, a hang, or an internal message — and nothing may
be written to ``--out``. Valid but unusual input must replay (exit 0).

Tests marked ``# passes`` held when written; the others pin bugs found by the attack and fail until fixed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from promptcache._cli import main
from promptcache.replay._readers import read_file
from promptcache.replay._transcript import TranscriptError

U = {"role": "user", "content": "hi"}
A = {"role": "assistant", "content": "yo"}
OK = [U, A]


def _write(tmp_path: Path, name: str, data: str | bytes | object) -> Path:
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    elif isinstance(data, str):
        path.write_text(data, encoding="utf-8", newline="")
    else:
        path.write_text(json.dumps(data, indent=1))
    return path


def _replay(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``promptcache replay`` in-process; a Python exception is a test failure (the user would see a traceback)."""
    args = list(argv)
    if "--out" not in args:
        args += ["--out", str(tmp_path / "out")]
    try:
        code = main(["replay", *args, "--no-chart"])
    except SystemExit as exc:  # argparse
        code = exc.code  # type: ignore[assignment]
    except BaseException as exc:  # noqa: BLE001
        pytest.fail(f"traceback instead of an error line: {type(exc).__name__}: {exc}", pytrace=False)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _bad(tmp_path: Path, capsys: pytest.CaptureFixture[str], path: Path, line: int | None, *extra: str) -> str:
    """Exit 2, one stderr line ``promptcache: error: FILE:LINE: ...``, nothing in --out. Returns the reason."""
    code, out, err = _replay(tmp_path, capsys, str(path), *extra)
    assert code == 2, (code, err)
    assert err.count("\n") == 1 and err.startswith("promptcache: error: "), err
    where = f"{path}:{line}: " if line is not None else f"{path}:"
    assert err.startswith(f"promptcache: error: {where}"), err
    assert not (tmp_path / "out").exists()
    return err[len(f"promptcache: error: {where}") :]


def _ok_or_located_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> int:
    """Either the run succeeds, or it is a one-line error naming the file (no traceback, no internal message)."""
    code, out, err = _replay(tmp_path, capsys, str(path), *extra)
    if code == 0:
        assert (tmp_path / "out" / "replay.json").exists()
    else:
        assert code == 2, (code, err)
        assert err.count("\n") == 1 and err.startswith(f"promptcache: error: {path}:"), err
        assert not (tmp_path / "out").exists()
    return code


# --------------------------------------------------------------------------------------------------------------
# Failing: tracebacks
# --------------------------------------------------------------------------------------------------------------


def test_deep_nesting_in_a_file_with_a_bad_record_is_not_a_recursion_error(tmp_path, capsys) -> None:
    # orjson accepts depth < 1024; locating the bad record re-parses with the pure-Python scanner -> RecursionError
    text = (
        '[{"role": "user", "content": "hi"},\n{"role": "assistant", "content": 5, "meta": '
        + "[" * 600
        + "]" * 600
        + "}]"
    )
    path = _write(tmp_path, "deep.json", text)
    assert "content must be a string or a list of blocks, got 5" in _bad(tmp_path, capsys, path, 2)


def _deep(n: int) -> object:
    value: object = 1
    for _ in range(n):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    "messages",
    [
        pytest.param(
            [
                U,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": _deep(300)}}],
                },
            ],
            id="openai-args-dict",
        ),
        pytest.param(
            [
                U,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c", "type": "function", "function": {"name": "f", "arguments": json.dumps(_deep(300))}}
                    ],
                },
            ],
            id="openai-args-string",
        ),
        pytest.param(
            [U, {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "f", "input": _deep(300)}]}],
            id="anthropic-input",
        ),
        pytest.param(
            [
                U,
                {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "f", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": _deep(300)}]},
                A,
            ],
            id="anthropic-tool-result",
        ),
        pytest.param({"tools": [{"name": "f", "input_schema": _deep(300)}], "messages": OK}, id="tool-schema"),
    ],
)
def test_deeply_nested_but_valid_json_values_do_not_crash(tmp_path, capsys, messages) -> None:
    # orjson.dumps stops at depth 255 -> "TypeError: Recursion limit reached" escapes the CLI
    _ok_or_located_error(tmp_path, capsys, _write(tmp_path, "deep.json", messages))


@pytest.mark.parametrize(
    "message",
    [
        pytest.param({"role": "assistant", "content": _deep(300)}, id="content"),
        pytest.param({"role": _deep(300), "content": "x"}, id="role"),
        pytest.param({"role": "assistant", "content": "x", "timestamp": _deep(300)}, id="timestamp"),
    ],
)
def test_deeply_nested_bad_value_is_named_not_a_traceback(tmp_path, capsys, message) -> None:
    # the error message itself (_short -> orjson.dumps) raises TypeError: Recursion limit reached
    path = _write(tmp_path, "deep.json", [U, message])
    _bad(tmp_path, capsys, path, None)


def test_empty_first_user_message_is_not_an_internal_simulator_error(tmp_path, capsys) -> None:
    # now: exit 2 "cache point boundary 0 outside the request (1..0 blocks)" (langchain-aws strategy), no file named
    path = _write(tmp_path, "empty_user.json", [{"role": "user", "content": ""}, A])
    _ok_or_located_error(tmp_path, capsys, path)


def test_zero_token_replay_with_one_strategy_does_not_crash_the_report(tmp_path, capsys) -> None:
    # now: TypeError: unsupported format string passed to NoneType.__format__ (report._print_advice, rel is None)
    path = _write(tmp_path, "empty_user.json", [{"role": "user", "content": ""}, A])
    _ok_or_located_error(tmp_path, capsys, path, "--strategy", "anchored-tail")


@pytest.mark.parametrize("empty", ["", None, []], ids=["empty-string", "null", "empty-list"])
def test_empty_assistant_message_before_another_assistant_turn(tmp_path, capsys, empty) -> None:
    # now: exit 2 "two cache points at block boundary 1" (internal invariant of the langchain-aws strategy)
    path = _write(tmp_path, "empty_asst.json", [U, {"role": "assistant", "content": empty}, A])
    _ok_or_located_error(tmp_path, capsys, path)


def _tool_conversation(n: int, tag: str) -> list[dict]:
    messages: list[dict] = [{"role": "user", "content": f"look these up {tag}"}]
    for i in range(n):
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "get", "arguments": json.dumps({"i": i, "t": tag})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"r{i}{tag}"},
        ]
    return [*messages, {"role": "assistant", "content": "done"}]


def test_same_file_name_in_two_directories(tmp_path, capsys) -> None:
    # both conversations get the id "x.json#0"; the intention replay caches per id -> IndexError
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = _write(tmp_path / "a", "x.json", _tool_conversation(1, "A"))
    b = _write(tmp_path / "b", "x.json", _tool_conversation(5, "B"))
    code, _, err = _replay(tmp_path, capsys, str(a), str(b))
    assert code == 0, err
    report = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert report["conversations"] == 2 and report["intention_cache"]["tool_calls"] == 6


def test_duplicate_conversation_ids_in_one_file(tmp_path, capsys) -> None:
    # same crash with explicit ids; fine would be: replay both, or a one-line error naming the duplicate id
    path = _write(
        tmp_path,
        "dup.json",
        [{"id": "1", "messages": _tool_conversation(1, "A")}, {"id": "1", "messages": _tool_conversation(5, "B")}],
    )
    _ok_or_located_error(tmp_path, capsys, path)


def test_too_long_out_name_is_an_error_line(tmp_path, capsys) -> None:
    # now: OSError [Errno 36] File name too long, from the --out pre-check (Path.exists)
    sample = _write(tmp_path, "ok.json", OK)
    out = tmp_path / ("x" * 300)
    code, _, err = _replay(tmp_path, capsys, str(sample), "--out", str(out))
    assert code == 2 and err.count("\n") == 1 and "--out" in err, err


def test_too_long_file_name_is_an_error_line(tmp_path, capsys) -> None:
    # now: OSError [Errno 36] File name too long, from read_file's Path.is_dir()
    path = tmp_path / ("y" * 300 + ".json")
    code, _, err = _replay(tmp_path, capsys, str(path))
    assert code == 2 and err.startswith(f"promptcache: error: {path}: ") and err.count("\n") == 1, err


def test_non_utf8_file_name(tmp_path, capsys) -> None:
    # legal on Linux; now: TypeError "str is not valid UTF-8: surrogates not allowed" writing replay.json (exit 1)
    path = _write(tmp_path, os.fsdecode(b"caf\xe9.json"), OK)
    code, _, err = _replay(tmp_path, capsys, str(path))
    assert code == 0, err
    assert (tmp_path / "out" / "replay.json").exists()


# --------------------------------------------------------------------------------------------------------------
# Failing: wrong line / misleading reason
# --------------------------------------------------------------------------------------------------------------


def test_invalid_utf8_names_the_line_of_the_bad_byte(tmp_path, capsys) -> None:
    # now: line 1 ("str is not valid UTF-8: surrogates not allowed"), the byte is on line 4
    text = (
        '[\n{"role": "user", "content": "a"},\n{"role": "assistant", "content": "b"},\n'
        '{"role": "user", "content": "caf\xe9"},\n{"role": "assistant", "content": "c"}\n]\n'
    )
    path = _write(tmp_path, "latin1.json", text.encode("latin-1"))
    assert "UTF-8" in _bad(tmp_path, capsys, path, 4)


def test_cr_only_line_endings_count_lines_in_json(tmp_path, capsys) -> None:
    # JSONL counts a lone CR as a line break, JSON documents do not: now line 1 instead of 4
    text = (
        '[\r{"role": "user", "content": "a"},\r{"role": "assistant", "content": "b"},\r'
        '{"role": "assistant", "content": 7}\r]'
    )
    path = _write(tmp_path, "cr.json", text)
    assert "got 7" in _bad(tmp_path, capsys, path, 4)


@pytest.mark.parametrize("name", ["transcript", "transcript.txt"])
def test_pretty_json_syntax_error_without_json_suffix_names_its_line(tmp_path, capsys, name) -> None:
    # now: falls back to JSONL and reports line 1 "unexpected end of data" (the '[' line)
    text = (
        '[\n  {"role": "user", "content": "hi"},\n  {"role": "assistant", "content": "yo"},\n'
        '  {"role": "user", "content": "x",}\n]\n'
    )
    path = _write(tmp_path, name, text)
    assert "trailing comma" in _bad(tmp_path, capsys, path, 4)


@pytest.mark.parametrize(
    ("bad", "needle"),
    [({"content": "x"}, "without a role"), (None, "must be an object"), ("hello", "must be an object")],
    ids=["no-role", "null", "string"],
)
def test_one_bad_message_in_a_message_list_is_named(tmp_path, capsys, bad, needle) -> None:
    # now: the list is taken for a list of conversations and the error blames the FIRST (valid) message, line 2:
    # 'conversation has no message list (...): {"role":"user","content":"hi"}'
    path = _write(tmp_path, "list.json", [U, A, bad, A])  # indent=1: the bad message starts on line 10
    reason = _bad(tmp_path, capsys, path, 10 if isinstance(bad, dict) else None)
    assert needle in reason, reason


def test_empty_file_argument_does_not_suggest_the_root_directory(tmp_path, capsys) -> None:
    # now: "promptcache: error: : is a directory; give the transcript files in it (e.g. /*.json)"
    code, _, err = _replay(tmp_path, capsys, "")
    assert code == 2 and err.count("\n") == 1, err
    assert "/*.json" not in err and "is a directory" not in err, err


# --------------------------------------------------------------------------------------------------------------
# Failing: option errors are not one line naming the value
# --------------------------------------------------------------------------------------------------------------


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "promptcache", "replay", *argv], capture_output=True, text=True, timeout=120
    )


def test_non_numeric_gap_is_one_line(tmp_path) -> None:
    # cli docstring: exit 2 with "one line on stderr naming ... the bad option value"; argparse prints usage first
    sample = _write(tmp_path, "ok.json", OK)
    proc = _cli(str(sample), "--gap-s", "abc", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "'abc'" in proc.stderr, proc.stderr


def test_gap_minus_inf_names_the_value(tmp_path) -> None:
    # now: "argument --gap-s: expected one argument" ('-inf' is taken for an option), plus the usage block
    sample = _write(tmp_path, "ok.json", OK)
    proc = _cli(str(sample), "--gap-s", "-inf", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "-inf" in proc.stderr, proc.stderr


# --------------------------------------------------------------------------------------------------------------
# Failing: wrong types silently coerced / valid input dropped or rejected
# --------------------------------------------------------------------------------------------------------------


def test_null_text_is_not_the_word_none(tmp_path) -> None:
    path = _write(
        tmp_path,
        "n.json",
        [
            {"role": "user", "content": [{"type": "text", "text": None}]},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": None}]},
        ],
    )
    try:
        [conv] = read_file(path)
    except TranscriptError as exc:  # an error naming the line is fine too
        assert exc.line == 2
        return
    texts = [b.text for m in conv.messages for b in m.blocks]
    assert "None" not in texts, texts


def test_text_block_with_an_object_is_an_error(tmp_path) -> None:
    # now: the text becomes Python's repr "{'a': 1}" and is counted as tokens
    path = _write(tmp_path, "t.json", [U, {"role": "assistant", "content": [{"type": "text", "text": {"a": 1}}]}])
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert info.value.line >= 3 and '{"a":1}' in info.value.reason


def test_null_tool_call_ids_are_not_the_string_none(tmp_path) -> None:
    # now: id None -> "None" on both sides, so unrelated calls and results pair up by the id "None"
    path = _write(
        tmp_path,
        "ids.json",
        [
            U,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": None, "type": "function", "function": {"name": "f", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": None, "content": "r"},
            A,
        ],
    )
    [conv] = read_file(path)
    ids = [b.id for m in conv.messages for b in m.blocks if b.kind in ("tool_use", "tool_result")]
    assert ids == ["", ""], ids


def test_tool_call_ids_reused_across_turns_pair_each_result_with_its_call(tmp_path, capsys) -> None:
    # OpenAI-compatible servers (vLLM, Ollama, ...) emit "call_0" every turn. The intention replay maps results by id
    # over the whole conversation, so the first call gets the second call's result: figures differ from unique ids.
    def conv(id1: str, id2: str) -> list[dict]:
        return [
            {"role": "user", "content": "where is my order 17?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": id1, "type": "function", "function": {"name": "get_order", "arguments": '{"order": 17}'}}
                ],
            },
            {"role": "tool", "tool_call_id": id1, "content": "shipped"},
            {"role": "assistant", "content": "It has shipped."},
            {"role": "user", "content": "please, where is my order 17?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": id2, "type": "function", "function": {"name": "get_order", "arguments": '{"order": 17}'}}
                ],
            },
            {"role": "tool", "tool_call_id": id2, "content": "delivered"},
            {"role": "assistant", "content": "It was delivered."},
        ]

    figures = []
    for ids in (("call_1", "call_2"), ("call_0", "call_0")):
        out = tmp_path / f"out-{ids[1]}"
        path = _write(tmp_path, f"{ids[1]}.json", conv(*ids))
        code, _, err = _replay(tmp_path, capsys, str(path), "--out", str(out))
        assert code == 0, err
        figures.append(json.loads((out / "replay.json").read_text())["intention_cache"])
    unique, reused = figures
    assert unique["same_call_repeats_changed"] == 1 and unique["right_answers_stale"] == 1
    assert {k: v for k, v in reused.items() if k != "memory"} == {k: v for k, v in unique.items() if k != "memory"}


def test_legacy_openai_function_call_is_not_dropped(tmp_path) -> None:
    # role "function" is read (as a tool result) but the assistant's "function_call" is silently ignored
    path = _write(
        tmp_path,
        "fn.json",
        [
            {"role": "user", "content": "weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "weather", "arguments": '{"city": "Paris"}'},
            },
            {"role": "function", "name": "weather", "content": "18C"},
            {"role": "assistant", "content": "18C."},
        ],
    )
    [conv] = read_file(path)
    calls = conv.messages[1].tool_calls()
    assert [(b.name, b.text) for b in calls] == [("weather", '{"city":"Paris"}')]


def test_openai_refusal_content_part_is_read(tmp_path, capsys) -> None:
    # a valid OpenAI chat assistant content part; now: "unsupported content block type 'refusal'"
    path = _write(
        tmp_path,
        "refusal.json",
        [U, {"role": "assistant", "content": [{"type": "refusal", "refusal": "I can't help with that."}]}],
    )
    code, _, err = _replay(tmp_path, capsys, str(path))
    assert code == 0, err


# --------------------------------------------------------------------------------------------------------------
# Passing: bad documents
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "line", "needle"),
    [
        ("trunc.json", '[\n{"role": "user", "content": "hi"},\n{"role": "assistant", "cont', 3, "invalid JSON"),
        ("str.json", '"hello"', 1, "expected conversations (a JSON list or object), got 'hello'"),
        ("num.json", "42", 1, "got 42"),
        ("null.json", "null", 1, "got null"),
        ("emptylist.json", "[]", 1, "no conversations in the file"),
        ("emptyobj.json", "{}", 1, "conversation has no message list"),
        ("listofnums.json", "[1, 2]", 1, "a conversation must be a list of messages or an object, got 1"),
        (
            "nan.json",
            '[\n{"role": "user", "content": "hi", "timestamp": NaN},\n{"role": "assistant"}]',
            2,
            "invalid JSON",
        ),
        ("inf.json", '[\n{"role": "user", "content": "hi", "timestamp": Infinity}]', 2, "invalid JSON"),
        ("huge.json", '[\n\n{"role": "user", "content": "hi", "timestamp": 1e999}]', 3, "infinity"),
        ("toodeep.json", "[" * 5000 + "]" * 5000, 1, "depth"),
        ("ctrl.json", '[\n{"role": "user", "content": "a\x01b"}]', 2, "control character"),
        ("surrogate.json", '[\n{"role": "user", "content": "\\ud800"}]', 2, "surrogate"),
        ("trailing.json", '[{"role": "user", "content": "hi"}]\n[]', 2, "invalid JSON"),
        ("bom.json", "\ufeff" + json.dumps(OK), 1, "BOM"),
    ],
)
def test_malformed_documents(tmp_path, capsys, name, text, line, needle) -> None:  # passes
    assert needle in _bad(tmp_path, capsys, _write(tmp_path, name, text), line)


@pytest.mark.parametrize(
    ("message", "needle"),
    [
        ({"role": 5, "content": "x"}, "unknown message role/type 5"),
        ({"role": None, "content": "x"}, "unknown message role/type null"),
        ({"role": "User", "content": "x"}, "unknown message role/type 'User'"),
        ({"role": "assistant", "content": 5}, "got 5"),
        ({"role": "assistant", "content": True}, "got true"),
        ({"role": "assistant", "content": {"text": "x"}}, 'got {"text":"x"}'),
        ({"role": "assistant", "content": [1, 2]}, "content block 1 is not an object"),
        ({"role": "assistant", "content": [{"text": "x"}]}, "unsupported content block type null"),
        ({"role": "assistant", "content": None, "tool_calls": {"id": "c"}}, "tool_calls must be a list"),
        ({"role": "assistant", "content": None, "tool_calls": ["abc"]}, "tool call 'abc' is not an object"),
        ({"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}, "tool call without a name"),
        (
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {"name": 5}}]},
            "tool call without a name",
        ),
        ({"role": "assistant", "content": [{"type": "tool_use", "id": "c"}]}, "tool call block without a name"),
        ({"role": "tool", "tool_call_id": "c", "content": 5}, "got 5"),
        ({"type": "ai", "data": "x"}, "LangChain message data must be an object"),
        ({"role": "user", "content": "x", "timestamp": "yesterday"}, "timestamp 'yesterday'"),
        ({"role": "user", "content": "x", "timestamp": True}, "timestamp true"),
        ({"role": "user", "content": "x", "created_at": [1]}, "timestamp [1]"),
    ],
)
def test_malformed_messages_name_the_value(tmp_path, capsys, message, needle) -> None:  # passes
    path = _write(tmp_path, "m.jsonl", "\n".join(json.dumps(r) for r in [U, A, message, A]) + "\n")
    assert needle in _bad(tmp_path, capsys, path, 3)


def test_jsonl_blank_lines_and_crlf_keep_line_numbers(tmp_path, capsys) -> None:  # passes
    bad = json.dumps({"role": "user", "content": 5})
    text = json.dumps(U) + "\r\n\r\n   \r\n" + json.dumps(A) + "\r\n\r\n" + bad + "\r\n"
    assert "got 5" in _bad(tmp_path, capsys, _write(tmp_path, "b.jsonl", text), 6)


def test_jsonl_bad_line_in_the_middle(tmp_path, capsys) -> None:  # passes
    text = json.dumps(U) + "\n" + json.dumps(A) + "\n\n{bad\n" + json.dumps(U) + "\n"
    assert "invalid JSON on this line" in _bad(tmp_path, capsys, _write(tmp_path, "b.jsonl", text), 4, "--strict")


@pytest.mark.parametrize(
    ("data", "line", "needle"),
    [
        (b"\xef\xbb\xbf" + b'{"role": "user", "content": "hi"}\n', 1, "BOM"),
        (b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "caf\xe9"}\n', 2, "UTF-8"),
        (b'{"role": "user", "content": "hi"}\nnull\n', 2, "got null"),
        (b"\n\n\n", 1, "empty file"),
        (b'{"type": "summary", "summary": "x"}\n', 1, "no conversations"),
        (b'{"message": {"role": "system", "content": "s"}, "sessionId": "a"}\n', 1, "besides the system prompt"),
        (
            b'{"message": {"role": "user", "content": "s"}, "sessionId": "a", "timestamp": "soon"}\n',
            1,
            "timestamp 'soon'",
        ),
    ],
)
def test_jsonl_bad_records(tmp_path, capsys, data, line, needle) -> None:  # passes
    assert needle in _bad(tmp_path, capsys, _write(tmp_path, "l.jsonl", data), line, "--strict")


def test_missing_file_among_several_is_named_and_nothing_written(tmp_path, capsys) -> None:  # passes
    good = _write(tmp_path, "ok.json", OK)
    code, out, err = _replay(tmp_path, capsys, str(good), str(tmp_path / "gone.json"))
    assert code == 2 and err == f"promptcache: error: {tmp_path / 'gone.json'}: no such file\n"
    assert not (tmp_path / "out").exists()


def test_container_fields_of_wrong_type(tmp_path, capsys) -> None:  # passes
    for system, needle in ((5, "got 5"), ({"text": "x"}, 'got {"text":"x"}')):
        path = _write(tmp_path, "s.json", [{"system": system, "messages": OK}])
        assert needle in _bad(tmp_path, capsys, path, None)
    for tools in ("abc", {"a": 1}, ["abc"]):
        path = _write(tmp_path, "t.json", [{"tools": tools, "messages": OK}])
        assert "tools must be a list of tool schemas" in _bad(tmp_path, capsys, path, None)
    path = _write(tmp_path, "c.json", {"conversations": {"a": OK}})
    assert "no message list" in _bad(tmp_path, capsys, path, 1)


def test_no_assistant_turn(tmp_path, capsys) -> None:  # passes
    path = _write(tmp_path, "u.json", [U, {"role": "user", "content": "again"}])
    code, _, err = _replay(tmp_path, capsys, str(path))
    assert code == 2 and "nothing to replay in" in err and str(path) in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------------------------------------------
# Passing: options
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--gap-s", "nan"], "--gap-s must be a finite number of seconds >= 0, got nan"),
        (["--gap-s", "inf"], "got inf"),
        (["--gap-s", "1e400"], "got inf"),
        (["--model", ""], "no Amazon Bedrock price for model ''"),
        (["--model", "anthropic.claude"], "no Amazon Bedrock price for model 'anthropic.claude'"),
        (["--strategy", ""], "unknown strategy ''"),
        (["--strategy", "NONE"], "unknown strategy 'NONE'"),
        (["--strategy", "none,last-message"], "unknown strategy 'none,last-message'"),
        (["--strategy", "anchored-tail+response-cache"], "unknown strategy 'anchored-tail+response-cache'"),
    ],
)
def test_bad_option_values(tmp_path, capsys, args, needle) -> None:  # passes
    path = _write(tmp_path, "ok.json", OK)
    code, out, err = _replay(tmp_path, capsys, str(path), *args)
    assert code == 2 and needle in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def test_out_is_a_device_file(tmp_path, capsys) -> None:  # passes
    path = _write(tmp_path, "ok.json", OK)
    code, out, err = _replay(tmp_path, capsys, str(path), "--out", "/dev/null")
    assert code == 2 and err == "promptcache: error: --out must be a directory, but '/dev/null' is a file\n"


def test_out_where_replay_json_is_a_directory(tmp_path, capsys) -> None:  # passes
    path = _write(tmp_path, "ok.json", OK)
    (tmp_path / "out" / "replay.json").mkdir(parents=True)
    code, out, err = _replay(tmp_path, capsys, str(path))
    assert err.startswith("promptcache: warning: the log names no model for any request")  # then the error
    err = err.split("\n", 1)[1]
    assert code == 2 and err.startswith("promptcache: error: cannot write to --out") and err.count("\n") == 1


def test_gap_zero_and_minus_zero_replay(tmp_path, capsys) -> None:  # passes
    path = _write(tmp_path, "ok.json", OK)
    for gap in ("0", "-0"):
        code, _, err = _replay(tmp_path, capsys, str(path), "--gap-s", gap)
        assert code == 0, err


# --------------------------------------------------------------------------------------------------------------
# Passing: unusual but valid input replays (or is a located error), no traceback
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "messages",
    [
        pytest.param(
            [{**U, "timestamp": 1000}, {**A, "timestamp": 900}, {**U, "timestamp": 800}, {**A, "timestamp": 700}],
            id="timestamps-backwards",
        ),
        pytest.param(
            [{**U, "timestamp": "2024-01-01T00:00:00Z"}, {**A, "timestamp": 1704067205000}], id="iso-and-milliseconds"
        ),
        pytest.param([{**U, "timestamp": -5}, A], id="negative-timestamp"),
        pytest.param([{**U, "timestamp": 1e300}, A, U, {**A, "timestamp": 5}], id="huge-timestamp"),
        pytest.param(
            [
                U,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{not json"}}
                    ],
                },
                {"role": "tool", "tool_call_id": "c", "content": "r"},
                A,
            ],
            id="arguments-not-json",
        ),
        pytest.param(
            [
                U,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}],
                },
                {"role": "tool", "tool_call_id": "c", "content": "r"},
                A,
            ],
            id="arguments-dict",
        ),
        pytest.param(
            [
                U,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": 5}}],
                },
                {"role": "tool", "tool_call_id": "c", "content": "r"},
                A,
            ],
            id="arguments-int",
        ),
        pytest.param(
            [
                U,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
                },
                {"role": "tool", "tool_call_id": "nope", "content": "r"},
                A,
            ],
            id="result-matches-no-call",
        ),
        pytest.param(
            [
                U,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                        {"id": "c", "type": "function", "function": {"name": "g", "arguments": "{}"}},
                    ],
                },
                {"role": "tool", "tool_call_id": "c", "content": "r1"},
                {"role": "tool", "tool_call_id": "c", "content": "r2"},
                A,
            ],
            id="duplicate-call-ids",
        ),
        pytest.param([{"role": "tool", "tool_call_id": "x", "content": "r"}, A], id="starts-with-tool-result"),
        pytest.param([U, {"role": "assistant"}], id="assistant-without-content"),
        pytest.param(
            [
                U,
                {"type": "ai", "data": {"content": "y"}},
                {"role": "user", "content": [{"type": "text", "text": "z"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "w"}]},
            ],
            id="mixed-formats",
        ),
        pytest.param({"conversations": [[U, A], {"messages": [U, A], "id": "x"}]}, id="mixed-containers"),
    ],
)
def test_unusual_valid_input(tmp_path, capsys, messages) -> None:  # passes
    _ok_or_located_error(tmp_path, capsys, _write(tmp_path, "v.json", messages))


def test_mixed_jsonl_records(tmp_path, capsys) -> None:  # passes
    records = [
        U,
        A,
        [U, A],
        {"messages": [U, A]},
        {"type": "human", "data": {"content": "x"}},
        {"type": "ai", "data": {"content": "y"}},
        {"type": "summary", "summary": "s"},
        {"message": U, "sessionId": "s", "timestamp": "2024-01-01T00:00:00Z"},
        {"message": A, "sessionId": "s", "timestamp": "2024-01-01T00:00:05Z"},
    ]
    path = _write(tmp_path, "mix.jsonl", "\n".join(json.dumps(r) for r in records) + "\n")
    code, _, err = _replay(tmp_path, capsys, str(path))
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "replay.json").read_text())["conversations"] == 4


def test_very_long_single_message(tmp_path, capsys) -> None:  # passes
    path = _write(tmp_path, "long.json", [{"role": "user", "content": "word " * 1_000_000}, A])
    code, _, err = _replay(tmp_path, capsys, str(path))
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "replay.json").read_text())["input_tokens"] >= 1_000_000


def test_same_file_twice(tmp_path, capsys) -> None:  # passes
    path = _write(tmp_path, "ok.json", OK)
    code, _, err = _replay(tmp_path, capsys, str(path), str(path))
    assert code == 0, err
