"""The replay's ResponseCache key of each request, built from a running hash of the prompt's message digests, is the
key the ResponseCache itself builds for that request's prompt (``response_cache_key``), request by request, and a
request replayed out of order (a shorter prompt after a longer one) gets its own key again."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langchain_core")

from promptcache.replay._readers import read_file  # noqa: E402
from promptcache.replay._repeats import RepeatCounter, lc_messages, response_cache_key  # noqa: E402
from promptcache.replay._transcript import Block, Conversation, Message  # noqa: E402

MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"
FIXTURES = Path(__file__).resolve().parents[1] / "data" / "claude_code"


def _agent_conversation(family: str) -> Conversation:
    """A system prompt, tools, tool calls and results (ids reused across turns), and two user turns."""
    messages = [Message("user", (Block("text", "Book a flight to Sydney"),))]
    for turn in range(3):
        messages.append(
            Message(
                "assistant",
                (
                    Block("text", f"Looking {turn}"),
                    Block("tool_use", '{"city":"SYD"}', name="search", id="call_0"),
                ),
            )
        )
        messages.append(Message("user", (Block("tool_result", f"{turn} flights", name="search", id="call_0"),)))
    messages.append(Message("assistant", (Block("text", "Found three."),)))
    messages.append(Message("user", (Block("text", "The cheapest, please"),)))
    messages.append(Message("assistant", (Block("text", "Booked."),)))
    tools = [{"name": "search", "description": "find flights", "input_schema": {"type": "object"}}]
    return Conversation("c1", family, (Block("text", "You are a travel agent."),), messages, tools)


def _keys_both_ways(conv: Conversation, cuts: list[int]) -> tuple[list[str], list[str]]:
    counter = RepeatCounter(MODEL)
    keyed = counter._conversation(conv)  # noqa: SLF001 - the per-conversation key state under test
    offset = 1 if conv.system else 0
    scope = conv.family[len("user:") :] if conv.family.startswith("user:") else None
    full = lc_messages(conv)
    ours = [keyed.key(offset + cut) for cut in cuts]
    theirs = [response_cache_key(full[: offset + cut], MODEL, scope=scope, tools=conv.tools or None) for cut in cuts]
    return ours, theirs


@pytest.mark.parametrize("family", ["task-7", "user:alice"])
def test_every_request_key_is_the_response_caches_key(family: str) -> None:
    conv = _agent_conversation(family)
    cuts = conv.request_ends()
    ours, theirs = _keys_both_ways(conv, cuts)
    assert ours == theirs
    assert len(set(ours)) == len(cuts) == 5


def test_a_shorter_prompt_after_a_longer_one_gets_its_own_key() -> None:
    conv = _agent_conversation("task-7")
    cuts = conv.request_ends()
    order = [cuts[3], cuts[1], cuts[4], cuts[0]]
    ours, theirs = _keys_both_ways(conv, order)
    assert ours == theirs


def test_claude_code_fixtures_key_like_the_response_cache() -> None:
    checked = 0
    for path in sorted(FIXTURES.glob("*.jsonl")):
        for conv in read_file(path):
            cuts = conv.request_ends()
            ours, theirs = _keys_both_ways(conv, cuts)
            assert ours == theirs, path.name
            checked += len(cuts)
    assert checked == 12  # the calls of the fixtures
