"""The Claude Code session reader: one request per API call, with the prompt that call really sent.

Fixtures: ``tests/data/claude_code/`` (written for these tests, see the README there). The two real sessions of
the team's shared data are checked too when present (the benchmark data folder, docs/data.md, or under
``PROMPTCACHE_DATA``); the test skips without them.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest

from promptcache._cli import main
from promptcache.replay._readers import read_file
from promptcache.replay._transcript import Block, Conversation, TranscriptError, TranscriptWarning, Usage

DATA = Path(__file__).resolve().parents[1] / "data" / "claude_code"


def request_ids(path: Path) -> set[str]:
    """The distinct API calls of a log, counted straight from its JSON (``requestId``, else ``message.id``)."""
    out = set()
    for raw in path.read_text().splitlines():
        rec = json.loads(raw)
        if rec.get("type") == "assistant":
            out.add(rec.get("requestId") or rec["message"]["id"])
    return out


def requests(convs: list[Conversation]) -> int:
    return sum(len(c.request_ends()) for c in convs)


def shape(conv: Conversation) -> list[tuple[str, list[tuple[str, str, str]]]]:
    return [(m.role, [(b.kind, b.text, b.id) for b in m.blocks]) for m in conv.messages]


@pytest.mark.parametrize("name", ["parallel_tools.jsonl", "rewind.jsonl", "compact.jsonl", "folder-session.jsonl"])
def test_one_request_per_distinct_request_id(name: str) -> None:
    convs = read_file(DATA / name)
    assert requests(convs) == len(request_ids(DATA / name))
    assert sorted(i for c in convs for i in c.meta["request_ids"]) == sorted(request_ids(DATA / name))


def test_blocks_of_one_call_merged_and_parallel_results_regrouped() -> None:
    [conv] = read_file(DATA / "parallel_tools.jsonl")
    assert conv.replies == [1, 3] and conv.request_ends() == [1, 3]
    assert shape(conv) == [
        ("user", [("text", "List the files and read the README.", "")]),
        # the whitespace-only text block "\n\n" the reply opened with is dropped
        (
            "assistant",
            [
                ("reasoning", "Two tools at once.", ""),
                ("tool_use", '{"command":"ls"}', "toolu_P1"),
                ("tool_use", '{"file_path":"README.md"}', "toolu_P2"),
            ],
        ),
        # results in call order (the log has P2's result first, and P1's is not on the parentUuid chain)
        ("user", [("tool_result", "README.md\nsrc", "toolu_P1"), ("tool_result", "# Demo", "toolu_P2")]),
        ("assistant", [("text", "Two entries: README.md and src.", "")]),
    ]
    first, second = conv.messages[1], conv.messages[3]
    # usage of the line with the most output tokens (the streamed lines carry partial output counts)
    assert first.usage == Usage(
        input_tokens=3, cache_read_tokens=5000, cache_write_tokens=1000, cache_write_1h_tokens=1000, output_tokens=40
    )
    assert first.usage.prompt_tokens == 6003
    assert second.usage == Usage(1, 6000, 200, 0, 12)
    assert (first.model, second.model) == ("claude-opus-4-6", "claude-haiku-4-5-20251001")
    # timestamps: the reply's first line; the regrouped results the latest of their lines
    assert [m.timestamp for m in conv.messages] == [1772445601.0, 1772445602.0, 1772445605.0, 1772445607.0]
    assert conv.meta == {
        "format": "claude-code",
        "hidden_prefix": True,
        "session_id": "sess-parallel",
        "agent": "",
        "context_start": "session",
        "shared_messages": 0,
        "request_ids": ["req_P1", "req_P2"],
        "call_sources": [f"{DATA / 'parallel_tools.jsonl'}:4", f"{DATA / 'parallel_tools.jsonl'}:12"],
        "reply_done_s": {1: 1772445603.0, 3: 1772445607.0},  # each call's last line: when its reply was done
    }
    assert (conv.id, conv.family, conv.system, conv.tools) == ("sess-parallel", "sess-parallel", (), [])


def test_rewound_branch_keeps_its_calls_and_repeats_only_the_shared_history() -> None:
    main_line, branch = read_file(DATA / "rewind.jsonl")
    assert [t for _, blocks in shape(main_line) for _, t, _ in blocks] == [
        "Name a colour.",
        "Blue.",
        "Another one?",
        "Green.",
    ]
    assert main_line.replies == [1, 3] and main_line.meta["request_ids"] == ["req_W1", "req_W2"]
    # the branch's prompt is the chain from its leaf: the first exchange, then the new question
    assert [t for _, blocks in shape(branch) for _, t, _ in blocks] == [
        "Name a colour.",
        "Blue.",
        "Name a fruit instead.",
        "Apple.",
        "One more.",
        "Pear.",
    ]
    assert branch.replies == [3, 5] and branch.meta["request_ids"] == ["req_W3", "req_W4"]
    assert branch.meta["shared_messages"] == 2 and branch.id == "sess-rewind@6"
    assert branch.messages[1] is main_line.messages[1]  # the shared reply is the same message, not re-read


def test_compact_boundary_restarts_the_context_and_meta_lines_are_kept() -> None:
    before, after = read_file(DATA / "compact.jsonl")
    assert shape(before) == [
        ("user", [("text", "Fix the typo in main.py.", "")]),
        (
            "assistant",
            [("tool_use", '{"file_path":"main.py","new_string":"print","old_string":"pritn"}', "toolu_C1")],
        ),
        ("user", [("tool_result", "The file main.py has been updated.", "toolu_C1")]),
        # isMeta hook context attached after the result it follows (a leaf beside the chain)
        ("user", [("text", "<system-reminder>PostToolUse hook: lint passed</system-reminder>", "")]),
        ("assistant", [("text", "Fixed.", "")]),
    ]
    assert before.replies == [1, 4] and before.meta["context_start"] == "session"
    assert shape(after) == [
        (
            "user",
            [
                (
                    "text",
                    "This session is being continued from a previous conversation. Summary: fixed a typo in main.py.",
                    "",
                )
            ],
        ),
        ("user", [("text", "<local-command-caveat>Caveat: local command output below.</local-command-caveat>", "")]),
        ("assistant", [("text", "Ready.", "")]),  # "  \n" dropped, the rest of the call merged
        ("user", [("text", "Thanks.", "")]),  # the " " block dropped
        ("assistant", [("text", "You're welcome.", "")]),
    ]
    assert after.replies == [2, 4] and after.meta["context_start"] == "compact_boundary"
    assert after.messages[2].usage == Usage(3, 5000, 300, 300, 6)


def test_session_folder_reads_sub_agents_and_the_compaction_call() -> None:
    main_conv, agent, compaction = read_file(DATA / "folder-session")
    assert requests([main_conv, agent, compaction]) == 5
    assert main_conv.meta["request_ids"] == ["req_F1", "req_F2"]
    # the hook context the compaction log records (parent in the main log, logged before req_F2) was sent
    assert [m.role for m in main_conv.messages] == ["user", "assistant", "user", "user", "assistant"]
    assert main_conv.messages[3].blocks == (
        Block("text", "<system-reminder>PostToolUse hook: 1 agent finished</system-reminder>"),
    )
    assert (agent.id, agent.meta["agent"], agent.replies) == ("folder-session/agent-a1b2c3", "agent-a1b2c3", [1, 3])
    assert {agent.messages[i].model for i in agent.replies} == {"claude-sonnet-4-5-20250929"}
    assert agent.messages[0].blocks == (Block("text", "Find how hooks work."),)
    # the compaction call: the main conversation so far, then the summary request; one request of its own
    assert compaction.meta["agent"] == "agent-acompact-d4e5f6" and compaction.replies == [6]
    assert compaction.meta["shared_messages"] == 5
    assert [m.blocks for m in compaction.messages[:5]] == [m.blocks for m in main_conv.messages]
    assert compaction.messages[5].blocks == (
        Block("text", "Your task is to create a detailed summary of the conversation so far."),
    )
    assert compaction.messages[6].usage == Usage(3, 2050, 60, 60, 15)


def test_session_log_alone_has_no_sub_agent_calls() -> None:
    [conv] = read_file(DATA / "folder-session.jsonl")
    assert conv.replies == [1, 3] and [m.role for m in conv.messages] == ["user", "assistant", "user", "assistant"]


def test_compaction_log_alone_names_the_missing_history() -> None:
    [conv] = read_file(DATA / "folder-session" / "subagents" / "agent-acompact-d4e5f6.jsonl")
    assert conv.replies == [1] and conv.meta["context_start"] == "missing_parent"
    assert conv.meta["agent"] == "agent-acompact-d4e5f6"


def test_unknown_record_type_is_skipped_with_one_warning(tmp_path: Path) -> None:
    lines = (DATA / "rewind.jsonl").read_text().splitlines()
    odd = json.dumps({"type": "attachment-v9", "uuid": "x1", "parentUuid": "w-u1"})
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join([lines[0], odd, *lines[1:3], odd, *lines[3:]]) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        convs = read_file(path)
    assert [str(w.message) for w in caught if w.category is TranscriptWarning] == [
        f"{path}:2: skipped records of unknown type 'attachment-v9' (first on this line)"
    ]
    assert requests(convs) == 4


def test_cli_prints_the_warning_once_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "odd.jsonl"
    odd = json.dumps({"type": "future-kind", "uuid": "x2", "parentUuid": None})
    path.write_text(odd + "\n" + (DATA / "parallel_tools.jsonl").read_text() + odd + "\n")
    assert main(["replay", str(path), "--out", str(tmp_path / "out"), "--no-chart"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"promptcache: warning: {path}:1: skipped records of unknown type 'future-kind' (first on this line)"
    ]


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ('{"type": "user", "uuid": "z", "parentUuid": null, "message": {"role": "user", "content"', "invalid JSON"),
        ('{"type": "user", "uuid": "z", "parentUuid": null}', "user record without a message object"),
        ('["not", "a", "record"]', "expected a Claude Code record"),
        ('{"type": "assistant", "parentUuid": null, "message": {"content": []}}', "assistant record without a uuid"),
    ],
)
def test_malformed_line_is_one_error_line_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str, reason: str
) -> None:
    lines = (DATA / "compact.jsonl").read_text().splitlines()
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([*lines[:3], bad, *lines[3:]]) + "\n")
    with pytest.raises(TranscriptError) as info:
        read_file(path)
    assert (info.value.path, info.value.line) == (str(path), 4) and reason in info.value.reason
    assert main(["replay", str(path), "--out", str(tmp_path / "out"), "--no-chart", "--strict"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"promptcache: error: {path}:4: ")


def test_bad_content_block_names_its_line(tmp_path: Path) -> None:
    rec = {"type": "user", "uuid": "q", "parentUuid": None, "message": {"role": "user", "content": [{"type": "?"}]}}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"type": "progress", "uuid": "p", "parentUuid": None}) + "\n" + json.dumps(rec) + "\n")
    with pytest.raises(TranscriptError, match=r"bad\.jsonl:2: unsupported content block type '\?'"):
        read_file(path)


def test_cli_replays_a_session_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["replay", str(DATA / "folder-session"), "--out", str(out), "--no-chart"]) == 0
    report = json.loads((out / "replay.json").read_text())
    assert (report["requests"], report["conversations"]) == (5, 3)


def _shared_claude_code() -> Path | None:
    roots = [Path(os.environ["PROMPTCACHE_DATA"])] if os.environ.get("PROMPTCACHE_DATA") else []
    roots += [parent / "shared" / "data" for parent in Path(__file__).resolve().parents]
    return next((r / "claude_code" for r in roots if (r / "claude_code").is_dir()), None)


SHARED = _shared_claude_code()
SESSIONS = {  # session -> (API calls in its log, sub-agent calls in its folder)
    "258c7280-ae70-4798-800f-63464d01a85d": (152, 4),
    "ae4a77f8-aedd-4bc1-888f-c94edc91af04": (217, 4),
}


@pytest.mark.skipif(SHARED is None, reason="benchmark data (docs/data.md) not present")
@pytest.mark.parametrize("session", sorted(SESSIONS))
def test_shared_sessions_one_request_per_api_call(session: str) -> None:
    assert SHARED is not None
    calls, agent_calls = SESSIONS[session]
    log = SHARED / f"{session}.jsonl"
    assert len(request_ids(log)) == calls
    assert requests(read_file(log)) == calls
    agents = sorted((SHARED / session / "subagents").glob("agent-*.jsonl"))
    assert sum(len(request_ids(p)) for p in agents) == agent_calls
    folder = read_file(SHARED / session)
    assert requests(folder) == calls + agent_calls
    assert sorted(i for c in folder for i in c.meta["request_ids"]) == sorted(
        set().union(request_ids(log), *(request_ids(p) for p in agents))
    )
    for conv in folder:  # every tool use of a prompt is answered in the message right after it
        for i, message in enumerate(conv.messages[:-1]):
            uses = [b.id for b in message.blocks if b.kind == "tool_use"]
            answers = [b.id for b in conv.messages[i + 1].blocks if b.kind == "tool_result"]
            assert answers[: len(uses)] == uses


def test_synthetic_replies_are_not_calls(tmp_path: Path) -> None:
    lines = [json.loads(x) for x in (DATA / "rewind.jsonl").read_text().splitlines()]
    error = {
        "type": "assistant",
        "uuid": "w-e1",
        "parentUuid": "w-u2",
        "isApiErrorMessage": True,
        "timestamp": "2026-03-02T10:00:02.500Z",
        "message": {
            "model": "<synthetic>",
            "id": "e1",
            "role": "assistant",
            "content": [{"type": "text", "text": "API Error: 529"}],
        },
    }
    lines[3]["parentUuid"] = "w-e1"  # the retried call hangs off the error line
    path = tmp_path / "retry.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [*lines[:3], error, *lines[3:]]) + "\n")
    convs = read_file(path)
    assert requests(convs) == 4
    assert [t for m in convs[0].messages for t in (b.text for b in m.blocks)] == [
        "Name a colour.",
        "Blue.",
        "Another one?",
        "Green.",
    ]


@pytest.mark.skipif(SHARED is None, reason="benchmark data (docs/data.md) not present")
@pytest.mark.parametrize("session", sorted(SESSIONS))
def test_cli_replays_shared_session_folder(session: str, tmp_path: Path) -> None:
    assert SHARED is not None
    out = tmp_path / "out"
    assert main(["replay", str(SHARED / session), "--out", str(out), "--no-chart"]) == 0
    report = json.loads((out / "replay.json").read_text())
    assert report["requests"] == sum(SESSIONS[session])


def test_calls_without_request_id_merge_by_message_id(tmp_path: Path) -> None:
    lines = [json.loads(x) for x in (DATA / "parallel_tools.jsonl").read_text().splitlines()]
    for rec in lines:
        rec.pop("requestId", None)
    path = tmp_path / "old.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    [conv] = read_file(path)
    assert conv.meta["request_ids"] == ["msg_P1", "msg_P2"]
    assert shape(conv) == shape(read_file(DATA / "parallel_tools.jsonl")[0])


def test_plain_directory_is_not_a_session_folder(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs.jsonl").write_text(json.dumps({"role": "user", "content": "hi"}) + "\n")
    with pytest.raises(TranscriptError, match="is a directory; give the transcript files in it"):
        read_file(tmp_path / "logs")


def test_session_log_inside_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "sess"
    (folder / "subagents").mkdir(parents=True)
    (folder / "sess.jsonl").write_text((DATA / "folder-session.jsonl").read_text())
    for agent in (DATA / "folder-session" / "subagents").iterdir():
        (folder / "subagents" / agent.name).write_text(agent.read_text())
    assert requests(read_file(folder)) == 5
