"""A conversation's request counts only the messages it adds, and places exactly what counting everything places.

``place_cache_points(previous_counts=plan.counted)`` takes the previous request's counts for the messages whose JSON
is a byte-identical prefix of that request; everything else is counted. Checked here:

- on random growing conversations (hypothesis, derandomized) with earlier messages edited, inserted or dropped
  between requests: the placements (index, tokens covered, fingerprint), the request sent and every count equal
  those of the same request counted from scratch;
- a request that only appends counts only the new messages; a changed earlier message (a new object or the same
  dict changed in place) is counted again from there on;
- what is never reused: a ``content`` tuple, a caller's ``cachePoint``, a value orjson refuses; binary values are
  compared by length, which is all the counters read of them;
- `RecentCounts` stays within its bounds.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import promptcache.cache_points._request_scan as scan_module
from promptcache.cache_points import AnchoredTailStrategy, MultiPointStrategy, default_count_tokens, get_model_info
from promptcache.cache_points._converse import place_cache_points
from promptcache.cache_points._prefix_counts import CountedMessages, RecentCounts, serialise

CLAUDE = get_model_info("us.anthropic.claude-sonnet-4-20250514-v1:0", min_tokens_per_cache_point=60)
NOVA = get_model_info("amazon.nova-pro-v1:0", min_tokens_per_cache_point=60)
SYSTEM = [{"text": "You are a careful support agent. " * 20}]
TOOLS = [{"toolSpec": {"name": "lookup", "inputSchema": {"json": {"type": "object"}}}}]

_words = st.text(alphabet="abcdef gh", min_size=1, max_size=120)


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text}]}


def _call(i: int, text: str, args: Any) -> dict[str, Any]:
    use = {"toolUse": {"toolUseId": f"t{i}", "name": "lookup", "input": args}}
    return {"role": "assistant", "content": [{"text": text}, use]}


def _result(i: int, text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"toolResult": {"toolUseId": f"t{i}", "content": [{"text": text}]}}]}


_args = st.one_of(
    st.fixed_dictionaries({"q": _words}),
    st.fixed_dictionaries({"q": _words, "n": st.integers(0, 99), "tags": st.lists(_words, max_size=2)}),
)
_extra = st.one_of(
    st.just({"image": {"format": "png", "source": {"bytes": b"\x89PNG" * 3}}}),
    st.just({"document": {"format": "txt", "name": "notes", "source": {"bytes": b"some notes"}}}),
    st.just({"reasoningContent": {"reasoningText": {"text": "thinking", "signature": "sig"}}}),
)


@st.composite
def _turn(draw: Any, i: int) -> list[dict[str, Any]]:
    """One agent step: the model's call and the tool's result, or a plain user turn (sometimes with a string
    content or an extra block)."""
    kind = draw(st.sampled_from(["tool", "tool", "user", "string"]))
    if kind == "tool":
        return [_call(i, draw(_words), draw(_args)), _result(i, draw(_words))]
    reply = {"role": "assistant", "content": [{"text": draw(_words)}]}
    if kind == "string":
        return [reply, {"role": "user", "content": draw(_words)}]
    user = _user(draw(_words))
    if draw(st.booleans()):
        user["content"].insert(0, draw(_extra))
    return [reply, user]


@st.composite
def _histories(draw: Any) -> list[list[dict[str, Any]]]:
    """The successive requests of one conversation: each the previous plus a turn, sometimes after an earlier
    message was edited, a message dropped (history cut) or the history rewritten from one point."""
    messages = [_user(draw(_words))]
    requests = [copy.deepcopy(messages)]
    for i in range(draw(st.integers(1, 8))):
        change = draw(st.sampled_from(["none", "none", "none", "edit", "drop", "cut"]))
        if change == "edit" and len(messages) > 1:
            at = draw(st.integers(0, len(messages) - 1))
            messages[at] = {**messages[at], "content": [{"text": draw(_words)}]}
        elif change == "drop" and len(messages) > 2:
            del messages[: 2 * draw(st.integers(1, len(messages) // 2)) - 1]
            messages.insert(0, _user(draw(_words)))
        elif change == "cut" and len(messages) > 2:
            del messages[draw(st.integers(1, len(messages) - 1)) :]
            if messages[-1]["role"] == "user":
                messages.append({"role": "assistant", "content": [{"text": draw(_words)}]})
        messages += draw(_turn(i))
        requests.append(copy.deepcopy(messages))  # every request's objects are new, as langchain-aws builds them
    return requests


@settings(max_examples=120, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    requests=_histories(),
    info=st.sampled_from([CLAUDE, NOVA]),
    strategy=st.sampled_from([AnchoredTailStrategy, MultiPointStrategy]),
)
def test_reused_counts_place_what_counting_everything_places(requests: list[Any], info: Any, strategy: Any) -> None:
    reused_before: list[Any] = []
    scratch_before: list[Any] = []
    counted = None
    for request in requests:
        reused = place_cache_points(
            info, SYSTEM, request, TOOLS, previous_placements=reused_before, strategy=strategy, previous_counts=counted
        )
        scratch = place_cache_points(
            info, SYSTEM, copy.deepcopy(request), TOOLS, previous_placements=scratch_before, strategy=strategy
        )
        assert reused.placements == scratch.placements
        assert [p.fingerprint for p in reused.placements] == [p.fingerprint for p in scratch.placements]
        assert (reused.messages, reused.system, reused.tools) == (scratch.messages, scratch.system, scratch.tools)
        assert reused.counted is not None
        assert reused.counted.tokens == [default_count_tokens(m) for m in request]
        assert reused.counted.raw == serialise(request)
        reused_before, scratch_before, counted = reused.placements, scratch.placements, reused.counted


def _agent(n: int) -> list[dict[str, Any]]:
    messages = [_user("question zero")]
    for i in range(1, n, 2):
        messages += [_call(i, f"calling {i}", {"q": f"query {i}"}), _result(i, f"result {i} " * 20)]
    return messages


@pytest.fixture
def counted_contents(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The message contents counted (each message's content, as handed to the counting walk)."""
    seen: list[Any] = []
    original = scan_module._quick

    def spy(content: list[Any], counting: bool) -> int | None:
        seen.append(content)
        return original(content, counting)

    monkeypatch.setattr(scan_module, "_quick", spy)
    return seen


def _top_level(seen: list[Any], request: list[dict[str, Any]]) -> list[int]:
    """Indices of the messages of ``request`` whose content was counted (tool results' inner lists left out)."""
    ids = {id(m["content"]): i for i, m in enumerate(request)}
    return [ids[id(c)] for c in seen if id(c) in ids]


def test_an_appending_request_counts_only_its_new_messages(counted_contents: list[Any]) -> None:
    first = _agent(21)
    plan = place_cache_points(CLAUDE, SYSTEM, first, TOOLS, strategy=AnchoredTailStrategy)
    assert _top_level(counted_contents, first) == list(range(21))
    counted_contents.clear()
    second = copy.deepcopy(first) + [_call(21, "calling 21", {"q": "query 21"}), _result(21, "result 21")]
    again = place_cache_points(
        CLAUDE, SYSTEM, second, TOOLS, previous_placements=plan.placements, previous_counts=plan.counted
    )
    assert _top_level(counted_contents, second) == [21, 22]
    assert again.counted is not None and again.counted.tokens == [default_count_tokens(m) for m in second]
    assert plan.counted is not None and plan.counted.reusable(again.counted.raw) == 21


def test_a_changed_earlier_message_is_counted_again_from_there_on(counted_contents: list[Any]) -> None:
    messages = _agent(21)
    plan = place_cache_points(CLAUDE, SYSTEM, messages, TOOLS)
    counted_contents.clear()
    messages[6]["content"][0]["toolResult"]["content"][0]["text"] = "a different result"  # in place, same objects
    again = place_cache_points(CLAUDE, SYSTEM, messages, TOOLS, previous_counts=plan.counted)
    assert _top_level(counted_contents, messages) == list(range(6, 21))
    assert again.counted is not None and again.counted.tokens == [default_count_tokens(m) for m in messages]
    assert again.counted.tokens[6] != plan.counted.tokens[6]  # type: ignore[union-attr]
    counted_contents.clear()
    shorter = copy.deepcopy(messages[:3]) + [_user("a new question")]  # history cut and rewritten
    cut = place_cache_points(CLAUDE, SYSTEM, shorter, TOOLS, previous_counts=again.counted)
    assert _top_level(counted_contents, shorter) == [3]
    assert cut.counted is not None and cut.counted.tokens == [default_count_tokens(m) for m in shorter]


def test_binary_values_are_compared_by_length(counted_contents: list[Any]) -> None:
    def request(data: bytes) -> list[dict[str, Any]]:
        document = {"document": {"format": "txt", "name": "notes", "source": {"bytes": data}}}
        return [{"role": "user", "content": [document, {"text": "summarise this"}]}, *_agent(5)[1:]]

    plan = place_cache_points(CLAUDE, SYSTEM, request(b"x" * 4_000), TOOLS)
    counted_contents.clear()
    same_length = request(b"y" * 4_000)
    again = place_cache_points(CLAUDE, SYSTEM, same_length, TOOLS, previous_counts=plan.counted)
    assert _top_level(counted_contents, same_length) == []
    assert again.counted is not None and again.counted.tokens == [default_count_tokens(m) for m in same_length]
    longer = request(b"x" * 8_000)
    grown = place_cache_points(CLAUDE, SYSTEM, longer, TOOLS, previous_counts=again.counted)
    assert _top_level(counted_contents, longer) == [0, 1, 2, 3, 4]
    assert grown.counted is not None and grown.counted.tokens[0] == default_count_tokens(longer[0]) == 2_007


class _Text(str):
    """A str subclass (orjson would write it as a str; it is never reused)."""


@pytest.mark.parametrize(
    "odd",
    [
        pytest.param(lambda m: {**m, "content": tuple(m["content"])}, id="a content tuple"),
        pytest.param(lambda m: {**m, "content": [*m["content"], {"cachePoint": {"type": "default"}}]}, id="a point"),
        pytest.param(lambda m: {**m, "content": [{"text": "when", "json": {1, 2}}]}, id="a set orjson refuses"),
        pytest.param(lambda m: {**m, "content": [{"text": _Text("a str subclass")}]}, id="a str subclass"),
    ],
)
def test_what_is_never_reused_is_counted_from_scratch(odd: Any) -> None:
    messages = _agent(9)
    plan = place_cache_points(CLAUDE, SYSTEM, messages, TOOLS)
    changed = copy.deepcopy(messages)
    changed[4] = odd(changed[4])
    again = place_cache_points(CLAUDE, SYSTEM, changed, TOOLS, previous_counts=plan.counted)
    scratch = place_cache_points(CLAUDE, SYSTEM, copy.deepcopy(changed), TOOLS)
    assert again.counted is None  # nothing kept for the next request either
    assert again.placements == scratch.placements
    assert [p.tokens_covered for p in again.placements] == [p.tokens_covered for p in scratch.placements]
    assert again.messages == scratch.messages


def test_a_custom_counter_keeps_nothing() -> None:
    plan = place_cache_points(CLAUDE, SYSTEM, _agent(9), TOOLS, count_tokens=lambda m: 100)
    assert plan.counted is None


def _counted(size: int) -> CountedMessages:
    return CountedMessages(b"x" * size, [size - 1], [1])


def test_recent_counts_keep_the_newest_within_entries_and_bytes() -> None:
    recent = RecentCounts(max_conversations=2, max_bytes=100)
    recent.put("a", _counted(30))
    recent.put("b", _counted(30))
    assert recent.get("a") is not None  # "a" is now the most recently used
    recent.put("c", _counted(30))
    assert [recent.get(k) is not None for k in "abc"] == [True, False, True]
    recent.put("d", _counted(80))  # over 100 bytes with "a" and "c": both dropped, oldest first
    assert [recent.get(k) is not None for k in "acd"] == [False, False, True]
    recent.put("e", _counted(101))  # larger than the whole budget: not kept
    assert recent.get("e") is None and recent.get("d") is not None
    recent.put("d", None)
    assert recent.get("d") is None
