"""The index of a Claude Code session's conversations (``promptcache.replay._claude_code_prefixes``): the same
answers as comparing a prompt with every conversation, in one step per shared message.

The logs are written by the test: one chain of user and assistant records, in log order and reversed (the reversed
log makes every call start a conversation that repeats the earlier ones, the case where comparing with every
conversation costs conversations x shared messages per call).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from promptcache.replay import _claude_code_calls
from promptcache.replay._claude_code_prefixes import PrefixIndex
from promptcache.replay._claude_code_walk import Key
from promptcache.replay._readers import read_file


def chain(calls: int) -> list[dict[str, Any]]:
    """A user request, then per call an assistant reply and the user's next message, each the previous one's child."""
    ts = "2026-03-02T10:{:02d}:{:02d}.000Z"
    usage = {"input_tokens": 3, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 10, "output_tokens": 7}
    records: list[dict[str, Any]] = []
    parent = None
    for k in range(calls):
        records.append({"parentUuid": parent, "sessionId": "sess-p", "type": "user", "uuid": f"u{k}",
                        "timestamp": ts.format(*divmod(2 * k, 60)),
                        "message": {"role": "user", "content": f"question {k}"}})  # fmt: skip
        records.append({"parentUuid": f"u{k}", "sessionId": "sess-p", "type": "assistant", "uuid": f"a{k}",
                        "requestId": f"req{k}", "timestamp": ts.format(*divmod(2 * k + 1, 60)),
                        "message": {"model": "claude-opus-4-6", "id": f"msg{k}", "role": "assistant",
                                    "usage": usage, "content": [{"type": "text", "text": f"answer {k}"}]}})  # fmt: skip
        parent = f"a{k}"
    return records


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


class CountingIndex(PrefixIndex):
    """The shipped index, recording how many keys each prompt it was asked about had."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[int] = []

    def match(self, keys: Any, file: int) -> tuple[int, int | None]:
        self.asked.append(len(keys))
        return super().match(keys, file)


@pytest.fixture
def indexes(monkeypatch: pytest.MonkeyPatch) -> list[CountingIndex]:
    """The indexes ``build_conversations`` makes, counting."""
    made: list[CountingIndex] = []

    def counting() -> CountingIndex:
        made.append(CountingIndex())
        return made[-1]

    monkeypatch.setattr(_claude_code_calls, "PrefixIndex", counting)
    return made


def test_a_reversed_log_costs_one_step_per_shared_message(tmp_path: Path, indexes: list[CountingIndex]) -> None:
    convs = read_file(write(tmp_path / "reversed.jsonl", chain(40)[::-1]))
    [index] = indexes
    # the last call is read first; every earlier call is a new conversation repeating the first one's history
    assert len(convs) == 40
    assert [len(c.messages) for c in convs] == [80 - 2 * i for i in range(40)]
    assert [c.meta["shared_messages"] for c in convs] == [0] + [79 - 2 * i for i in range(1, 40)]
    assert [c.id for c in convs[:2]] == ["sess-p", "sess-p@3"]  # the id names the line of its first call
    # no call continues the latest conversation (each is longer than the prompt: not compared), so the trie is walked,
    # one step per message of each prompt (all of it shared): none for the first call, 79 - 2i for call i; comparing
    # with every earlier conversation took i times as many (sum of i * (79 - 2i): 20,540 key comparisons)
    assert index.asked == [79] + [79 - 2 * i for i in range(1, 40)]
    assert index.steps == sum(79 - 2 * i for i in range(1, 40)) == 1521


def test_a_log_in_order_is_one_comparison_per_call(tmp_path: Path, indexes: list[CountingIndex]) -> None:
    [conv] = read_file(write(tmp_path / "forward.jsonl", chain(40)))
    [index] = indexes
    assert len(conv.messages) == 80 and conv.replies == list(range(1, 80, 2))
    assert conv.id == "sess-p" and conv.meta["shared_messages"] == 0
    # every call after the first continues the latest conversation: one comparison with it, no trie walk
    assert index.asked == list(range(1, 80, 2)) and index.steps == 39


def brute_force(convs: list[tuple[int, list[Key]]], keys: list[Key], file: int) -> tuple[int, int | None]:
    """The definition: the longest common prefix with any conversation, and the latest conversation of ``file``
    whose keys the prompt starts with."""
    shared = 0
    for _, conv in convs:
        n = 0
        for a, b in zip(conv, keys):
            if a != b:
                break
            n += 1
        shared = max(shared, n)
    found = None
    for i, (f, conv) in enumerate(convs):
        if f == file and conv == keys[: len(conv)]:
            found = i
    return shared, found


@pytest.mark.parametrize("seed", range(5))
def test_answers_equal_comparing_with_every_conversation(seed: int) -> None:
    rng = random.Random(seed)
    index = PrefixIndex()
    convs: list[tuple[int, list[Key]]] = []
    for call in range(300):
        file = rng.randrange(2)
        if convs and rng.random() < 0.8:  # a prompt repeating part of an earlier conversation, maybe more after it
            _, base = convs[rng.randrange(len(convs))]
            keys = base[: rng.randrange(len(base) + 1)] + [("u", f"{call}-{j}") for j in range(rng.randrange(3))]
        else:
            keys = [("u", f"{call}-{j}") for j in range(rng.randrange(1, 4))]
        shared, found = index.match(keys, file)
        expected_shared, expected = brute_force(convs, keys, file)
        assert found == expected
        if found is None:
            assert shared == expected_shared
        if found is None:
            found = len(convs)
            convs.append((file, []))
        conv = convs[found][1]
        start = len(conv)
        conv.extend(keys[start:])
        conv.append(("a", f"req{call}"))
        index.extend(found, file, conv, start)
    assert len(convs) > 50  # the seeds give many conversations, continued and not
