"""``place_cache_points`` and the strategies, called directly on Converse messages, keep the wrapper's guarantees:
no point directly after an empty or whitespace-only text block, and a caller's ``cachePoint`` inside a
``toolResult``'s content is moved right after the ``toolResult`` and counted toward Bedrock's 4 points."""

from __future__ import annotations

import copy

import pytest

from promptcache.cache_points import AnchoredTailStrategy, CacheStrategyConfig, MultiPointStrategy, get_model_info
from promptcache.cache_points._converse import place_cache_points

CLAUDE = get_model_info("anthropic.claude-sonnet-4-20250514-v1:0", min_tokens_per_cache_point=100)
CP = {"cachePoint": {"type": "default"}}
SYSTEM = [{"text": "You are terse."}]


def count(message) -> int:  # 500 tokens a message: every message alone reaches the 100-token minimum
    return 500


def _blank_ending(blank):
    return [
        {"role": "user", "content": [{"text": "First question."}]},
        {"role": "assistant", "content": [{"text": "First answer."}]},
        {"role": "user", "content": blank},
    ]


BLANKS = [[{"text": "Second question."}, {"text": "  \n"}], [{"text": "Second question."}, {"text": ""}], " \t "]


@pytest.mark.parametrize("blank", BLANKS)
@pytest.mark.parametrize("strategy", [AnchoredTailStrategy, MultiPointStrategy])
def test_no_point_after_a_blank_text_block(strategy, blank):
    messages = _blank_ending(blank)
    plan = place_cache_points(CLAUDE, SYSTEM, messages, count_tokens=count, strategy=strategy)
    assert 2 not in [p.index for p in plan.placements]
    content = plan.messages[2]["content"]
    assert not (isinstance(content, list) and "cachePoint" in content[-1])
    result = strategy(
        CacheStrategyConfig(CLAUDE, SYSTEM, messages, count_tokens=count)
    ).determine_optimal_cache_points()
    assert 2 not in [p.index for p in result.placements]


def _tool_turns(n: int) -> list[dict]:
    messages = [{"role": "user", "content": [{"text": "Look these up."}]}]
    for i in range(n):
        messages.append(
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": f"t{i}", "name": "f", "input": {}}}]}
        )
        result = {"toolResult": {"toolUseId": f"t{i}", "content": [{"text": f"result {i}"}, dict(CP)]}}
        messages.append({"role": "user", "content": [result]})
    return messages


def test_point_inside_a_tool_result_is_moved_after_it_and_counted():
    messages = _tool_turns(1)
    given = copy.deepcopy(messages)
    plan = place_cache_points(CLAUDE, SYSTEM, messages, count_tokens=count)
    assert messages == given  # the caller's messages are not modified
    assert plan.manual_points == 1
    assert plan.messages[2]["content"][:2] == [
        {"toolResult": {"toolUseId": "t0", "content": [{"text": "result 0"}]}},
        CP,
    ]
    assert plan.manual_points + plan.points_added <= 4


def test_four_points_inside_tool_results_leave_no_slot():
    plan = place_cache_points(CLAUDE, SYSTEM, _tool_turns(4), count_tokens=count)
    assert (plan.manual_points, plan.points_added) == (4, 0)
    points = [b for m in plan.messages for b in m["content"] if "cachePoint" in b]
    assert len(points) == 4


def test_five_points_inside_tool_results_are_refused():
    with pytest.raises(ValueError, match="already holds 5 cachePoint blocks"):
        place_cache_points(CLAUDE, SYSTEM, _tool_turns(5), count_tokens=count)


@pytest.mark.parametrize("strategy", [AnchoredTailStrategy, MultiPointStrategy])
def test_strategies_move_the_point_and_count_it(strategy):
    messages = _tool_turns(3)
    result = strategy(
        CacheStrategyConfig(CLAUDE, SYSTEM, messages, count_tokens=count)
    ).determine_optimal_cache_points()
    for m in result.messages:
        for block in m["content"]:
            if "toolResult" in block:
                assert all("cachePoint" not in b for b in block["toolResult"]["content"])
    total = sum(1 for m in result.messages for b in m["content"] if "cachePoint" in b) + int(result.system_cache_point)
    assert 3 <= total <= 4  # the caller's 3 kept, at most 1 added (a placement on a message that already ends with
    # the caller's point reuses it: no block added)
