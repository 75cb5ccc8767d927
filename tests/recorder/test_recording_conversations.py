"""What a conversation is in a TrafficRecorder file: the calls of one ``thread_id`` whose prompts each extend the
previous call's prompt and reply form one conversation (one chain of prefixes the cache can reuse); calls of one
thread that do not extend each other are conversations of their own, and calls of different threads never share
one."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from promptcache.replay._engine import run_replay
from tests.support.recordings import recorded_call

MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"


def _line(i: int, thread: str, prompt: list[BaseMessage], reply: AIMessage) -> str:
    return recorded_call(i, thread, prompt, reply, MODEL, every_s=60)


def _recording(path: Path, threads: list[str], extend: bool) -> Path:
    system = SystemMessage("policy " * 1500)
    history: list[BaseMessage] = [system]
    lines = []
    for i, thread in enumerate(threads):
        prompt = [*(history if extend else [system]), HumanMessage(f"question {i}")]
        reply = AIMessage(f"answer {i}")
        lines.append(_line(i, thread, prompt, reply))
        history = [*prompt, reply]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_three_calls_of_one_thread_that_extend_each_other_are_one_conversation(tmp_path: Path) -> None:
    result = run_replay([_recording(tmp_path / "calls.jsonl", ["t1"] * 3, extend=True)], MODEL)
    assert (result.conversations, result.requests) == (1, 3)


def test_calls_of_one_thread_that_do_not_extend_each_other_are_separate(tmp_path: Path) -> None:
    result = run_replay([_recording(tmp_path / "calls.jsonl", ["t1"] * 3, extend=False)], MODEL)
    assert (result.conversations, result.requests) == (3, 3)


def test_threads_keep_calls_apart(tmp_path: Path) -> None:
    result = run_replay([_recording(tmp_path / "calls.jsonl", ["t1", "t2", "t2"], extend=True)], MODEL)
    assert (result.conversations, result.requests) == (2, 3)
