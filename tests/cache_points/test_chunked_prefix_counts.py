"""The previous request's JSON is kept and compared in chunks of messages: reuse across chunk boundaries.

``CHUNK_MESSAGES`` is lowered to 3 here so that short conversations span many chunks: an appended turn, an edit in
an earlier chunk, a history cut at or inside a chunk, an identical request and a request that ends on a chunk
boundary all place exactly what counting everything places, the kept counts equal a fresh count, and the kept JSON
equals one serialisation of the whole request.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import promptcache.cache_points._prefix_counts as prefix_module
from promptcache.cache_points import AnchoredTailStrategy, MultiPointStrategy, default_count_tokens, get_model_info
from promptcache.cache_points._converse import place_cache_points
from promptcache.cache_points._prefix_counts import CountedMessages, read_prefix, serialise

CLAUDE = get_model_info("us.anthropic.claude-sonnet-4-20250514-v1:0", min_tokens_per_cache_point=60)
SYSTEM = [{"text": "You are a careful support agent. " * 20}]
TOOLS = [{"toolSpec": {"name": "lookup", "inputSchema": {"json": {"type": "object"}}}}]

_words = st.text(alphabet="abc de", min_size=1, max_size=60)


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text}]}


def _turn(i: int, text: str) -> list[dict[str, Any]]:
    use = {"toolUse": {"toolUseId": f"t{i}", "name": "lookup", "input": {"q": text, "n": i}}}
    result = {"toolResult": {"toolUseId": f"t{i}", "content": [{"text": text * 2}]}}
    return [{"role": "assistant", "content": [{"text": text}, use]}, {"role": "user", "content": [result]}]


@pytest.fixture(autouse=True)
def _small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prefix_module, "CHUNK_MESSAGES", 3)


@st.composite
def _histories(draw: Any) -> list[list[dict[str, Any]]]:
    messages = [_user(draw(_words))]
    requests = [copy.deepcopy(messages)]
    for i in range(draw(st.integers(1, 9))):
        change = draw(st.sampled_from(["none", "none", "again", "edit", "cut"]))
        if change == "edit" and len(messages) > 1:
            at = draw(st.integers(0, len(messages) - 1))
            messages[at] = {**messages[at], "content": [{"text": draw(_words)}]}
        elif change == "cut" and len(messages) > 2:
            del messages[draw(st.integers(1, len(messages) - 1)) :]
            if messages[-1]["role"] == "user":
                messages.append({"role": "assistant", "content": [{"text": draw(_words)}]})
        if change != "again":
            messages += _turn(i, draw(_words))
        requests.append(copy.deepcopy(messages))
    return requests


@settings(max_examples=80, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests=_histories(), strategy=st.sampled_from([AnchoredTailStrategy, MultiPointStrategy]))
def test_chunked_reuse_places_what_counting_everything_places(requests: list[Any], strategy: Any) -> None:
    reused_before: list[Any] = []
    scratch_before: list[Any] = []
    counted = None
    for request in requests:
        reused = place_cache_points(
            CLAUDE,
            SYSTEM,
            request,
            TOOLS,
            previous_placements=reused_before,
            strategy=strategy,
            previous_counts=counted,
        )
        scratch = place_cache_points(
            CLAUDE, SYSTEM, copy.deepcopy(request), TOOLS, previous_placements=scratch_before, strategy=strategy
        )
        assert reused.placements == scratch.placements
        assert [p.fingerprint for p in reused.placements] == [p.fingerprint for p in scratch.placements]
        assert (reused.messages, reused.system, reused.tools) == (scratch.messages, scratch.system, scratch.tools)
        assert reused.counted is not None
        assert reused.counted.tokens == [default_count_tokens(m) for m in request]
        assert reused.counted.raw == serialise(request)
        assert len(reused.counted.chunks) == -(-len(request) // 3)
        reused_before, scratch_before, counted = reused.placements, scratch.placements, reused.counted


def _agent(turns: int) -> list[dict[str, Any]]:
    messages = [_user("question zero")]
    for i in range(turns):
        messages += _turn(i, f"step {i}")
    return messages


def test_unchanged_chunks_keep_the_stored_bytes_and_only_new_messages_are_read_again() -> None:
    first = _agent(4)  # 9 messages: three whole chunks
    plan = place_cache_points(CLAUDE, SYSTEM, first, TOOLS)
    assert plan.counted is not None and len(plan.counted.chunks) == 3
    second = copy.deepcopy(first) + _turn(4, "step 4")
    read = read_prefix(second, plan.counted)
    assert read is not None
    reused, chunks, size = read
    assert (reused, size, len(chunks)) == (9, 3, 4)
    assert all(new is old for new, old in zip(chunks, plan.counted.chunks))


def test_an_edit_in_an_earlier_chunk_is_counted_again_from_that_message_on() -> None:
    first = _agent(4)
    plan = place_cache_points(CLAUDE, SYSTEM, first, TOOLS)
    second = copy.deepcopy(first)
    second[4] = {**second[4], "content": [{"text": "edited"}]}
    read = read_prefix(second, plan.counted)
    assert read is not None and read[0] == 4
    again = place_cache_points(CLAUDE, SYSTEM, second, TOOLS, previous_counts=plan.counted)
    assert again.counted is not None and again.counted.tokens == [default_count_tokens(m) for m in second]


def test_the_whole_json_api_reads_across_chunks() -> None:
    plan = place_cache_points(CLAUDE, SYSTEM, _agent(4), TOOLS)
    assert plan.counted is not None
    longer = _agent(5)
    assert plan.counted.reusable(serialise(longer) or b"") == 9
    shorter = _agent(2)  # 5 messages, the first 5 of the stored 9
    assert plan.counted.reusable(serialise(shorter) or b"") == 5
    one = CountedMessages(plan.counted.raw, [e for e in plan.counted._global_ends()], plan.counted.tokens)
    assert (one.chunk_messages, one.raw, one.reusable(plan.counted.raw)) == (9, plan.counted.raw, 9)
