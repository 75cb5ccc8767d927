"""The next request appends to the previous request's kept lists instead of copying them, once, and each request's
`CountedMessages` keeps reading only its own entries.

Checked here: a request that reuses every kept message takes the previous request's lists themselves (the same
objects, grown by its new messages); the previous request's ``kept`` / ``tokens`` / ``ends`` / ``size`` / ``raw``
stay what they were, and it reuses only its own messages; a second request given the same, already taken, counts copies instead and counts the same; a
request that reuses only some of them copies; the counts always equal counting from scratch.
"""

from __future__ import annotations

import copy
from typing import Any

from promptcache.cache_points import AnchoredTailStrategy, default_count_tokens, get_model_info
from promptcache.cache_points._converse import ConversePlan, place_cache_points
from promptcache.cache_points._prefix_counts import CountedMessages, serialise

CLAUDE = get_model_info("us.anthropic.claude-sonnet-4-20250514-v1:0", min_tokens_per_cache_point=60)
SYSTEM = [{"text": "You are a careful support agent. " * 20}]


def _agent(n: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "question zero"}]}]
    for i in range(1, n, 2):
        use = {"toolUse": {"toolUseId": f"t{i}", "name": "lookup", "input": {"q": f"query {i}"}}}
        result = {"toolResult": {"toolUseId": f"t{i}", "content": [{"text": f"result {i} " * 20}]}}
        messages += [{"role": "assistant", "content": [{"text": f"calling {i}"}, use]}]
        messages += [{"role": "user", "content": [result]}]
    return messages


def _place(messages: list[dict[str, Any]], previous: CountedMessages | None) -> CountedMessages:
    plan: ConversePlan = place_cache_points(
        CLAUDE, SYSTEM, copy.deepcopy(messages), strategy=AnchoredTailStrategy, previous_counts=previous
    )
    assert plan.counted is not None
    return plan.counted


def _state(counted: CountedMessages) -> tuple[Any, ...]:
    return (counted.kept, counted.tokens, counted.ends, counted.size, counted.raw, counted.first_str)


def test_a_request_reusing_every_kept_message_appends_to_the_previous_lists() -> None:
    first = _place(_agent(7), None)
    before = copy.deepcopy(_state(first))
    lists = (first._kept, first._tokens, first._ends)
    second = _place(_agent(9), first)
    assert (second._kept, second._tokens, second._ends) == lists
    assert second._kept is lists[0] and second._tokens is lists[1] and second._ends is lists[2]
    assert len(lists[1]) == 9 and len(first.tokens) == 7
    assert _state(first) == before
    assert first.reusable(_agent(9)) == 7  # the entries appended past its own are not its to reuse
    assert second.reusable(_agent(9)) == 9
    assert second.tokens == [default_count_tokens(m) for m in _agent(9)]
    assert second.raw == serialise(_agent(9))


def test_counts_already_taken_are_copied_and_count_the_same() -> None:
    first = _place(_agent(7), None)
    second = _place(_agent(9), first)
    retried = _place(_agent(11), first)  # the same previous counts again: taken by `second`
    assert retried._tokens is not second._tokens and retried._kept is not first._kept
    assert retried.tokens == [default_count_tokens(m) for m in _agent(11)]
    assert retried.raw == serialise(_agent(11))
    assert second.tokens == [default_count_tokens(m) for m in _agent(9)]
    assert len(first.tokens) == 7 and first.raw == serialise(_agent(7))


def test_a_request_reusing_part_of_the_kept_messages_copies() -> None:
    first = _place(_agent(7), None)
    changed = _agent(9)
    changed[4]["content"][0]["toolResult"]["content"][0]["text"] = "a different result"
    second = _place(changed, first)
    assert second._kept is not first._kept and second._tokens is not first._tokens
    assert second.tokens == [default_count_tokens(m) for m in changed]
    assert first.take(len(first.tokens)) is not None  # still untaken: the next full reuse may append
    assert first.take(len(first.tokens)) is None  # taken once only
