"""The rules by which a request reuses the counts of its conversation's previous request: the leading messages equal
to the kept copy (`promptcache.cache_points._prefix_counts.freeze`) under ``==`` made as strict as the counters.

- a caller that changes its dicts after the call cannot make a stale copy compare equal (the copy is ours);
- ``1``, ``1.0`` and ``True``, ``0.0`` and ``-0.0``, a tuple and a list are told apart; a NaN equals nothing;
- a changed earlier message is compared unequal from there on; the strings are shared, the containers copied;
- a request that reuses its prefix still knows every content is a list (only the placed messages are copied).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from promptcache.cache_points import AnchoredTailStrategy, default_count_tokens, get_model_info
from promptcache.cache_points._converse import place_cache_points
from promptcache.cache_points._prefix_counts import CountedMessages, Unkept, freeze, serialise
from promptcache.cache_points._request_scan import scan_request

CLAUDE = get_model_info("us.anthropic.claude-sonnet-4-20250514-v1:0", min_tokens_per_cache_point=60)
SYSTEM = [{"text": "You are a careful support agent. " * 20}]
TOOLS = [{"toolSpec": {"name": "lookup", "inputSchema": {"json": {"type": "object"}}}}]


def _agent(n: int, value: Any = 1) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "question zero"}]}]
    for i in range(1, n, 2):
        use = {"toolUse": {"toolUseId": f"t{i}", "name": "lookup", "input": {"q": f"query {i}", "n": value}}}
        result = {"toolResult": {"toolUseId": f"t{i}", "content": [{"text": f"result {i} " * 20}]}}
        messages += [
            {"role": "assistant", "content": [{"text": f"calling {i}"}, use]},
            {"role": "user", "content": [result]},
        ]
    return messages


def _counted(messages: list[dict[str, Any]]) -> CountedMessages:
    plan = place_cache_points(CLAUDE, SYSTEM, messages, TOOLS, strategy=AnchoredTailStrategy)
    assert plan.counted is not None
    return plan.counted


def _next(messages: list[dict[str, Any]], counted: CountedMessages) -> CountedMessages:
    """The next request's counts, checked against counting every message."""
    plan = place_cache_points(CLAUDE, SYSTEM, messages, TOOLS, strategy=AnchoredTailStrategy, previous_counts=counted)
    assert plan.counted is not None
    assert plan.counted.tokens == [default_count_tokens(m) for m in messages]
    assert plan.counted.raw == serialise(messages)
    return plan.counted


def test_dicts_changed_after_the_call_are_compared_as_they_are_now() -> None:
    messages = _agent(9)
    counted = _counted(messages)
    assert counted.reusable(messages) == 9
    messages[3]["content"][1]["toolUse"]["input"]["q"] = "a much longer query than before " * 4  # in place
    messages[7]["content"][0]["text"] = "calling again"
    assert counted.reusable(messages) == 3
    again = _next(messages, counted)
    assert again.tokens[3] != counted.tokens[3]
    messages[1]["content"].append({"text": "one more block"})  # the caller's list, after this call too
    assert again.reusable(messages) == 1


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(1, True, id="int then bool"),
        pytest.param(True, 1, id="bool then int"),
        pytest.param(1, 1.0, id="int then float"),
        pytest.param(1.0, 1, id="float then int"),
        pytest.param(0.0, -0.0, id="0.0 then -0.0"),
        pytest.param(["a", "b"], ("a", "b"), id="list then tuple"),
        pytest.param(b"12345", bytearray(b"12345"), id="bytes then bytearray"),
    ],
)
def test_values_equal_in_python_but_not_to_the_counters_are_not_reused(before: Any, after: Any) -> None:
    assert before == after or isinstance(after, tuple)  # plain == would have reused all but the tuple
    counted = _counted(_agent(9, before))
    changed = _agent(9, before)
    changed[5]["content"][1]["toolUse"]["input"]["n"] = after
    assert counted.reusable(changed) == 5
    assert counted.reusable(_agent(9, before)) == 9
    if not isinstance(after, (bytes, bytearray)):
        _next(changed, counted)


def test_a_nan_equals_nothing_so_it_is_counted_again() -> None:
    counted = _counted(_agent(5, float("nan")))
    assert counted.reusable(_agent(5, float("nan"))) == 1
    _next(_agent(5, float("nan")), counted)


def test_a_content_tuple_never_equals_the_kept_list() -> None:
    messages = _agent(5)
    counted = _counted(messages)
    changed = copy.deepcopy(messages)
    changed[2] = {**changed[2], "content": tuple(changed[2]["content"])}
    assert counted.reusable(changed) == 2


def test_a_changed_earlier_message_ends_the_reuse_there() -> None:
    messages = _agent(11)
    counted = _counted(messages)
    edited = copy.deepcopy(messages)
    edited[4]["content"][0]["toolResult"]["content"][0]["text"] = "a different result"
    assert counted.reusable(edited) == 4
    assert counted.reusable(edited[:3]) == 3  # a cut history: all of it
    assert counted.reusable([]) == 0
    assert counted.reusable(tuple(messages)) == 0  # not a list: nothing is compared
    _next(edited, counted)


def test_the_copy_shares_the_strings_and_owns_the_containers() -> None:
    messages = _agent(3, 7)
    counted = _counted(messages)
    kept: Any = counted.kept
    assert kept == messages and kept[1] is not messages[1]
    assert kept[1]["content"] is not messages[1]["content"]
    assert kept[1]["content"][0]["text"] is messages[1]["content"][0]["text"]
    assert kept[1]["content"][1]["toolUse"]["input"] is not messages[1]["content"][1]["toolUse"]["input"]
    assert counted.raw == serialise(messages) and counted.size == len(serialise(messages) or b"")


def test_freeze_refuses_what_it_does_not_copy() -> None:
    class Text(str):
        pass

    for odd in ({"text": Text("x")}, {1: "x"}, {"x": {1, 2}}, [object()]):
        with pytest.raises(Unkept):
            freeze(odd)
    assert freeze(("a", [1])) == ("a", [1]) and freeze(("a", [1])) != ("a", (1,))


def test_a_reused_request_still_knows_every_content_is_a_list() -> None:
    messages = _agent(9)
    counted = _counted(messages)
    scan = scan_request(CLAUDE, SYSTEM, messages + _agent(3)[1:], TOOLS, count_tokens=True, previous=counted)
    assert scan.messages.lists_only is True
    with_str = [{"role": "user", "content": "a string"}, *_agent(9)[1:]]
    counted = _counted(with_str)
    scan = scan_request(CLAUDE, SYSTEM, with_str + _agent(3)[1:], TOOLS, count_tokens=True, previous=counted)
    assert scan.messages.lists_only is False
    assert scan.messages.tokens == [default_count_tokens(m) for m in with_str + _agent(3)[1:]]


class _Ambiguous:
    """A value whose comparison raises (as an array's truth value does)."""

    def __eq__(self, other: object) -> bool:
        raise ValueError("ambiguous")

    __hash__ = None  # type: ignore[assignment]


def test_a_comparison_that_raises_reuses_nothing() -> None:
    messages = _agent(5)
    counted = _counted(messages)
    odd = copy.deepcopy(messages)
    odd[1]["content"][0]["text"] = _Ambiguous()
    assert counted.reusable(odd) == 0
    odd[0]["content"][0]["text"] = "changed"
    assert counted.reusable(odd) == 0
