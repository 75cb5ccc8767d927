"""Conversations that repeat another's history (a rewind, a compaction's summary call, a log read in reverse) take
the earlier conversation's LangChain messages for the messages they share: every request key is still the key
the ResponseCache builds for that prompt from scratch, and the shared messages are the very same objects."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("langchain_core")

from promptcache.replay._repeats import RepeatCounter, lc_messages, response_cache_key  # noqa: E402
from promptcache.replay._transcript import Block, Conversation, Message  # noqa: E402

MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"


def _history() -> list[Message]:
    """A user request, then three assistant tool calls (the id reused each turn) and their results."""
    messages = [Message("user", (Block("text", "Fix the tests"),))]
    for turn in range(3):
        use = Block("tool_use", f'{{"path":"f{turn}.py"}}', name="Read", id="toolu_0")
        messages.append(Message("assistant", (Block("text", f"Reading {turn}"), use)))
        messages.append(Message("user", (Block("tool_result", f"source {turn}", name="Read", id="toolu_0"),)))
    return messages


def _keys(counter: RepeatCounter, conv: Conversation) -> list[str]:
    keyed = counter._conversation(conv)  # noqa: SLF001 - the per-conversation key state under test
    offset = 1 if conv.system else 0
    return [keyed.key(offset + cut) for cut in conv.request_ends()]


def _theirs(conv: Conversation) -> list[str]:
    full = lc_messages(conv)
    offset = 1 if conv.system else 0
    return [response_cache_key(full[: offset + cut], MODEL, tools=conv.tools or None) for cut in conv.request_ends()]


@pytest.mark.parametrize("system", [(), (Block("text", "You are a coding agent."),)])
def test_a_conversation_repeating_the_last_ones_history_gets_the_response_caches_keys(
    system: tuple[Block, ...],
) -> None:
    history = _history()
    reply = Message("assistant", (Block("text", "Done."),))
    first = Conversation("c1", "s", system, [*history, reply], [])
    # the second conversation shares the first five message objects, then goes its own way
    other = Message("assistant", (Block("text", "Something else."),))
    second = Conversation("c1@9", "s", system, [*history[:5], other], [])
    counter = RepeatCounter(MODEL)
    assert _keys(counter, first) == _theirs(first)
    built = counter._lc["c1"].messages  # noqa: SLF001
    counter.forget("c1")
    assert _keys(counter, second) == _theirs(second)
    again = counter._lc["c1@9"].messages  # noqa: SLF001
    # the system message and the five shared messages are the first conversation's objects, the sixth is new
    shared = len(system) + 5
    assert [m is n for m, n in zip(again, built)] == [True] * shared + [False]
    counter.forget("c1@9")
    counter.finish()
    assert counter._last is None and not counter._lc  # noqa: SLF001


def test_shared_messages_are_the_earlier_conversations_objects() -> None:
    history = _history()
    first = Conversation("a", "s", (), [*history, Message("assistant", (Block("text", "Done."),))], [])
    second = dataclasses.replace(first, id="b", messages=history[:6])
    counter = RepeatCounter(MODEL)
    built = counter._conversation(first).messages  # noqa: SLF001
    counter.forget("a")
    again = counter._conversation(second).messages  # noqa: SLF001
    assert [m is n for m, n in zip(again, built)] == [True] * 6
    assert _keys(counter, second) == _theirs(second)


def test_a_different_system_prompt_shares_nothing() -> None:
    history = _history()
    first = Conversation("a", "s", (Block("text", "one"),), [*history, Message("assistant", ())], [])
    second = dataclasses.replace(first, id="b", system=(Block("text", "two"),))
    counter = RepeatCounter(MODEL)
    built = counter._conversation(first).messages  # noqa: SLF001
    counter.forget("a")
    again = counter._conversation(second).messages  # noqa: SLF001
    assert not any(m is n for m, n in zip(again, built))
    assert _keys(counter, second) == _theirs(second)
