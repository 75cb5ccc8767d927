"""What ``TrafficRecorder`` writes and how it fails: one line per model call (also through ``with_processors`` and
``ainvoke``), rotation by size, a write failure that loses one line and is logged once a minute without failing the
call, bad arguments refused at once, and a LangChain-level recording (``cache_control`` blocks) that replays."""

from __future__ import annotations

import asyncio
import io
import logging
from pathlib import Path
from typing import Any

import orjson
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from promptcache import TrafficRecorder, with_processors
from promptcache.replay._readers import read_file
from promptcache.replay._transcript import Block, Usage
from promptcache.testing import ScriptedChatModel
from tests.support.hardening import promptcache_warnings

USAGE = {"input_tokens": 1500, "output_tokens": 4, "total_tokens": 1504,
         "input_token_details": {"cache_read": 1200, "cache_creation": 290}}  # fmt: skip


def _lines(text: str) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in text.splitlines()]


def test_with_processors_records_the_request_with_its_cache_control_and_replays_it() -> None:
    stream = io.StringIO()
    model = ScriptedChatModel(replies=[AIMessage("fine", usage_metadata=USAGE)], model_name="claude-sonnet-4-5")
    wrapped = with_processors(model, [TrafficRecorder(stream)])
    system = SystemMessage([{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}])
    wrapped.invoke([system, HumanMessage("How are you?")], {"configurable": {"thread_id": "t9", "user_id": "bo"}})
    (line,) = _lines(stream.getvalue())
    assert (line["thread_id"], line["user"], line["model"], line["model_class"]) == (
        "t9", "bo", "claude-sonnet-4-5", "ScriptedChatModel"
    )  # fmt: skip
    assert "sent" not in line  # not a Bedrock model: the LangChain request is what was sent
    assert line["request"]["messages"][0]["data"]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert line["response"]["usage_metadata"] == USAGE and line["request"]["settings"]["temperature"] == 0.0
    (conv,) = _read(stream.getvalue().encode())
    assert conv.system == (Block("text", "Be brief."),) and conv.family == "user:bo"
    assert conv.meta["cache_points"] == [[{"where": "system", "index": None, "after": 1, "ttl": None}]]
    assert conv.messages[1].usage == Usage(10, 1200, 290, 0, 4)


def _read(data: bytes) -> list[Any]:
    import tempfile

    with tempfile.NamedTemporaryFile("wb", suffix=".log", delete=False) as handle:
        handle.write(data)
    try:
        return read_file(handle.name)
    finally:
        Path(handle.name).unlink()


def test_an_agent_call_is_recorded_once_sync_and_async(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    model = ScriptedChatModel(replies=["one", "two"])
    agent = create_agent(model, tools=[], middleware=[TrafficRecorder(path)])
    agent.invoke({"messages": [HumanMessage("first")]})
    asyncio.run(agent.ainvoke({"messages": [HumanMessage("second")]}))
    lines = _lines(path.read_text())
    assert [x["response"]["message"]["data"]["content"] for x in lines] == ["one", "two"]
    assert [x["request"]["messages"][-1]["data"]["content"] for x in lines] == ["first", "second"]


def test_a_file_is_rotated_by_size(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    model = ScriptedChatModel(replies=["ok"], cycle=True)
    recorder = TrafficRecorder(path, max_bytes=2_000, backups=2)
    wrapped = with_processors(model, [recorder])
    for i in range(12):
        wrapped.invoke([HumanMessage(f"question {i} " + "x" * 300)])
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["calls.jsonl", "calls.jsonl.1", "calls.jsonl.2"]
    kept = _lines((tmp_path / "calls.jsonl.2").read_text()) + _lines((tmp_path / "calls.jsonl.1").read_text())
    kept += _lines(path.read_text())
    assert all((tmp_path / name).stat().st_size <= 2_000 for name in files)
    numbers = [int(x["request"]["messages"][-1]["data"]["content"].split()[1]) for x in kept]
    assert numbers == list(range(12 - len(numbers), 12))  # the newest calls, in order, none cut
    assert recorder.lines_written == 12 and recorder.lines_lost == 0


class _BrokenStream(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError("disk full")


def test_a_failed_write_loses_one_line_logged_once_a_minute_and_the_call_goes_on(caplog: Any) -> None:
    model = ScriptedChatModel(replies=["a", "b", "c"])
    recorder = TrafficRecorder(_BrokenStream())
    wrapped = with_processors(model, [recorder])
    with caplog.at_level(logging.WARNING, logger="promptcache"):
        replies = [wrapped.invoke([HumanMessage(q)]).content for q in ("1", "2", "3")]
    assert replies == ["a", "b", "c"]
    assert (recorder.lines_written, recorder.lines_lost) == (0, 3)
    (warning,) = promptcache_warnings(caplog)
    assert "TrafficRecorder lost a line: OSError: disk full" in warning.getMessage()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"target": 42}, TypeError, "target must be a file path or a writable text stream, got int"),
        ({"target": "x.jsonl", "max_bytes": -1}, ValueError, "max_bytes must be a byte count >= 0 or None, got -1"),
        ({"target": "x.jsonl", "backups": 1.5}, ValueError, "backups must be a count >= 0, got 1.5"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        TrafficRecorder(**kwargs)


def test_dropped_text_keeps_sizes_and_digests_only() -> None:
    stream = io.StringIO()
    model = ScriptedChatModel(replies=[AIMessage("a secret reply", usage_metadata=USAGE)])
    with_processors(model, [TrafficRecorder(stream, drop_text=True)]).invoke([HumanMessage("my password is hunter2")])
    text = stream.getvalue()
    assert "hunter2" not in text and "secret" not in text
    (line,) = _lines(text)
    mark = line["request"]["messages"][0]["data"]["content"]["promptcache_redacted"]
    assert mark == {"chars": 22, "sha256": "53c88962bd9cf9904c01a774e23adf66c75345103a8e915f42ba4fee4fc0df0a"}


def test_a_streamed_call_is_recorded_once_with_its_whole_reply() -> None:
    stream = io.StringIO()
    model = ScriptedChatModel(replies=["three little words"])
    chunks = list(with_processors(model, [TrafficRecorder(stream)]).stream([HumanMessage("say three words")]))
    assert "".join(str(c.content) for c in chunks) == "three little words"
    (line,) = _lines(stream.getvalue())
    assert line["response"]["message"]["data"]["content"] == "three little words"


def test_drop_text_must_be_a_bool():
    import io

    import pytest

    from promptcache import TrafficRecorder

    with pytest.raises(TypeError, match="drop_text"):
        TrafficRecorder(io.StringIO(), drop_text="no")
