"""A call log's thread re-sent with an earlier message edited: its re-written tokens are ``prefix-changed``, not
``first-call``, and the fix says to keep earlier turns as sent (nothing the log holds prices it: 0).

The recording is written by the test: one ``thread_id``, a 6,000-token system prompt, two turns that extend each
other, then a third call that repeats the first user message and its reply but sends an edited second user message
(what an agent that rewrites its history does). A second thread that only starts a new conversation with the same
system prompt is new content (``first-call``): a thread of its own, not an edit.
"""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from promptcache.replay._engine import run_replay
from promptcache.replay._fixes import cause_rows
from tests.support.recordings import recorded_call

MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"
SYSTEM = SystemMessage("policy " * 1500)
EARLIER = "the customer asked about an order; " * 200


def _line(i: int, thread: str, prompt: list[BaseMessage], reply: AIMessage) -> str:
    return recorded_call(i, thread, prompt, reply, MODEL, every_s=30)


def _recording(path: Path, *, edit: bool) -> Path:
    first = [SYSTEM, HumanMessage(EARLIER + "where is order 7?"), AIMessage("It ships today.")]
    second = [*first, HumanMessage("and order 8? " * 300), AIMessage("Tomorrow.")]
    if edit:
        third = [*first, HumanMessage("and order 9, not 8? " * 300)]
        thread = "t1"
    else:
        third = [SYSTEM, HumanMessage("a new question " * 300)]
        thread = "t2"
    lines = [
        _line(0, "t1", first[:-1], first[-1]),  # type: ignore[arg-type]
        _line(1, "t1", second[:-1], second[-1]),  # type: ignore[arg-type]
        _line(2, thread, third, AIMessage("Noted.")),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_an_edited_earlier_turn_is_a_changed_prefix(tmp_path: Path) -> None:
    result = run_replay([_recording(tmp_path / "edited.jsonl", edit=True)], MODEL)
    assert (result.conversations, result.requests) == (2, 3)
    causes = result.miss_causes["anchored-tail"]
    assert causes["prefix-changed"].kinds == {"edited"}
    assert causes["prefix-changed"].cache_write_tokens > 0
    row = next(r for r in cause_rows(result, "anchored-tail") if r["cause"] == "prefix-changed")
    assert row["recoverable_usd"] == 0.0
    assert str(row["fix"]).startswith("keep earlier turns as sent: an earlier message of the thread")


def test_a_new_conversation_of_another_thread_is_new_content(tmp_path: Path) -> None:
    result = run_replay([_recording(tmp_path / "new.jsonl", edit=False)], MODEL)
    assert (result.conversations, result.requests) == (2, 3)
    causes = result.miss_causes["anchored-tail"]
    assert "prefix-changed" not in causes
    assert causes["first-call"].cache_write_tokens > 0
