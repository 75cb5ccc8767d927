"""Token counting (every block, offline) and request-level placement rules (budget, tools, TTL order)."""

from __future__ import annotations

from langchain_core.messages import AIMessage

from promptcache.cache_points import CachePointPlacement, default_count_tokens, get_model_info
from promptcache.cache_points import _tokens as tokens_module
from promptcache.cache_points._converse import place_cache_points
from promptcache.cache_points._tokens import IMAGE_TOKEN_ESTIMATE

CP = {"cachePoint": {"type": "default"}}
HOUR = {"cachePoint": {"type": "default", "ttl": "1h"}}


def test_default_counter_is_offline_cl100k_and_counts_every_block():
    # cl100k_base: "hello world" = 2 tokens, "get_weather" = 2, '{"city":"Paris"}' = 5, "sunny" = 2; +3 per message.
    assert default_count_tokens({"role": "user", "content": "hello world"}) == 5
    assert tokens_module.ENCODING_NAME == "cl100k_base"
    tool_use = {"toolUse": {"toolUseId": "1", "name": "get_weather", "input": {"city": "Paris"}}}
    assert default_count_tokens({"role": "assistant", "content": [tool_use]}) == 3 + 2 + 5
    result = {"toolResult": {"toolUseId": "1", "content": [{"text": "sunny"}]}}
    assert default_count_tokens({"role": "user", "content": [result, CP]}) == 3 + 2
    image = {"type": "image", "source": {}}
    assert (
        default_count_tokens({"role": "user", "content": [image, {"type": "text", "text": "hello world"}]})
        == 3 + IMAGE_TOKEN_ESTIMATE + 2
    )
    assert (
        default_count_tokens(
            {"role": "assistant", "content": [{"type": "tool_use", "name": "get_weather", "input": {"city": "Paris"}}]}
        )
        == 10
    )
    lc = AIMessage(content="hello world", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "x"}])
    assert default_count_tokens(lc) == 3 + 2 + 2 + 5


def _words(message):
    content = message["content"]
    return (
        sum(len(b["text"].split()) for b in content if "text" in b)
        if isinstance(content, list)
        else len(content.split())
    )


def test_ttl_never_increases_after_a_manual_five_minute_point():
    info = get_model_info("anthropic.claude-sonnet-4-5-20250929-v1:0", min_tokens_per_cache_point=3)
    system = [{"text": "a b c d"}, CP]  # manual 5m point in the system
    messages = [{"role": "user", "content": [{"text": "one two three four"}]}]
    plan = place_cache_points(info, system, messages, ttl="1h", count_tokens=_words)
    assert plan.messages == [{"role": "user", "content": [{"text": "one two three four"}, CP]}]
    assert plan.system == system and plan.manual_points == 1
    # Without a manual point the 1h TTL is kept everywhere.
    plan = place_cache_points(info, [{"text": "a b c d"}], messages, ttl="1h", count_tokens=_words)
    assert plan.system == [{"text": "a b c d"}, HOUR]
    assert plan.messages[0]["content"][-1] == HOUR
    assert messages == [{"role": "user", "content": [{"text": "one two three four"}]}]  # input untouched


def test_tools_point_only_when_allowed_and_large_enough():
    spec = {"toolSpec": {"name": "f", "description": " ".join(["word"] * 40), "inputSchema": {"json": {}}}}
    messages = [{"role": "user", "content": [{"text": "one two three"}]}]
    claude = get_model_info("anthropic.claude-3-7-sonnet-20250219-v1:0", min_tokens_per_cache_point=3)
    assert place_cache_points(claude, [], messages, [spec], count_tokens=_words).tools == [spec, CP]
    assert place_cache_points(claude, [], messages, [spec], count_tokens=_words, cache_tools=False).tools == [spec]
    nova = get_model_info("amazon.nova-lite-v1:0", min_tokens_per_cache_point=3)
    assert place_cache_points(nova, [], messages, [spec], count_tokens=_words).tools == [spec]
    big_min = claude.with_overrides(min_tokens_per_cache_point=500)
    assert place_cache_points(big_min, [], messages, [spec], count_tokens=_words).tools == [spec]


def test_budget_counts_tools_system_and_manual_points():
    info = get_model_info("anthropic.claude-3-7-sonnet-20250219-v1:0", min_tokens_per_cache_point=3)
    spec = {"toolSpec": {"name": "f", "description": " ".join(["word"] * 40), "inputSchema": {"json": {}}}}
    messages = [
        {"role": "user", "content": [{"text": "a b c"}, CP]},
        {"role": "assistant", "content": [{"text": "x"}]},
        {"role": "user", "content": [{"text": "d e f"}]},
        {"role": "assistant", "content": [{"text": "y"}]},
        {"role": "user", "content": [{"text": "g h i"}]},
    ]
    plan = place_cache_points(
        info,
        [{"text": "s t u"}],
        messages,
        [spec],
        count_tokens=_words,
        previous_placements=[CachePointPlacement(2, "message", 4)],
    )
    # 1 manual + tools + system leaves 1 message slot: the preserved point at 2 moves to the newest user message.
    assert (plan.manual_points, plan.tools_point, plan.system_point) == (1, True, True)
    assert [p.index for p in plan.placements] == [4]
    total = sum(b == CP for m in plan.messages for b in m["content"]) + plan.tools.count(CP) + plan.system.count(CP)
    assert total == 4
