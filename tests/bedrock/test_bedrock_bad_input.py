"""Bedrock cache points (model table, strategies, wrapper, processor) with bad input: clear errors, valid requests."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from support.hardening import DEAD_REDIS, NAN, RaisingCache

CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"


CLAUDE_BASE = "anthropic.claude-sonnet-4-20250514-v1:0"


@pytest.mark.parametrize("model_id, exc", [(None, TypeError), (5, TypeError), ("", ValueError), ("   ", ValueError)])
def test_get_model_info_rejects_bad_ids(model_id, exc):
    from promptcache.cache_points import get_model_info

    with pytest.raises(exc, match="model_id"):
        get_model_info(model_id)


@pytest.mark.parametrize(
    "overrides, exc, named",
    [
        (dict(min_tokens_per_cache_point=-1), ValueError, "-1"),
        (dict(min_tokens_per_cache_point=True), TypeError, "True"),
        (dict(min_tokens_per_cache_point=NAN), TypeError, "nan"),
        (dict(max_cache_points=1.5), TypeError, "1.5"),
        (dict(bogus=1), TypeError, "bogus"),
        (dict(cachable_fields=("system", "images")), ValueError, "images"),
        (dict(allowed_ttls=("2h",)), ValueError, "2h"),
    ],
)
def test_get_model_info_rejects_bad_overrides(overrides, exc, named):
    from promptcache.cache_points import get_model_info

    with pytest.raises(exc, match=named):
        get_model_info(CLAUDE, **overrides)


def test_get_model_info_resolves_odd_but_valid_ids():
    from promptcache.cache_points import get_model_info

    assert get_model_info(CLAUDE + "\n").model_id == CLAUDE_BASE
    assert get_model_info("arn:aws:bedrock:us-east-1:123:inference-profile/" + CLAUDE).model_id == CLAUDE_BASE
    unknown = get_model_info("🙂-model")
    assert (unknown.supports_prompt_cache, unknown.max_cache_points) == (False, 0)


def test_model_info_rejects_non_bool_supports_prompt_cache():
    from promptcache.cache_points import get_model_info

    with pytest.raises(TypeError, match="no"):
        get_model_info(CLAUDE, supports_prompt_cache="no")


def _strategy(**overrides):
    from promptcache.cache_points import CacheStrategyConfig, MultiPointStrategy, get_model_info

    config = dict(
        model_info=get_model_info(CLAUDE, min_tokens_per_cache_point=2),
        system_prompt="sys",
        messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "yo"},
            {"role": "user", "content": "q"},
        ],
        count_tokens=lambda m: 5,
    )
    config.update(overrides)
    return MultiPointStrategy(CacheStrategyConfig(**config)).determine_optimal_cache_points()


@pytest.mark.parametrize(
    "overrides, exc, named",
    [
        (dict(messages=None), TypeError, "NoneType"),
        (dict(messages={"role": "user"}), TypeError, "dict"),
        (dict(messages=[None]), TypeError, r"messages\[0\]"),
        (dict(messages=[{"role": "system", "content": "x"}]), ValueError, "system"),
        (dict(messages=[{"content": "x"}]), ValueError, "None"),
        (dict(system_prompt=42), TypeError, "42"),
        (dict(count_tokens=5), TypeError, "5"),
        (dict(count_tokens=lambda m: NAN), ValueError, "nan"),
        (dict(count_tokens=lambda m: True), ValueError, "True"),
        (dict(count_tokens=lambda m: 3.5), ValueError, "3.5"),
        (dict(max_points=-1), ValueError, "-1"),
        (dict(max_points=True), ValueError, "True"),
        (dict(ttl=5), ValueError, "5"),
        (dict(ttl="1h"), ValueError, "1h"),
        (dict(ttl=""), ValueError, "''"),
        (dict(previous_placements=[{"index": -1}]), ValueError, "-1"),
        (dict(previous_placements=[{"index": "0"}]), ValueError, "'0'"),
        (dict(previous_placements=[None]), TypeError, "None"),
        (dict(model_info={}), TypeError, "dict"),
    ],
)
def test_cache_strategy_config_rejects_bad_input(overrides, exc, named):
    with pytest.raises(exc, match=named):
        _strategy(**overrides)


@pytest.mark.parametrize(
    "previous",
    [
        [{"index": 10**9}],
        [{"index": 1}],
        [{"index": 0, "fingerprint": 42}],
        [{"index": 2, "type": "system"}],
        [{"index": i} for i in range(50)],
    ],
    ids=["out-of-range", "assistant-message", "wrong-fingerprint", "system-type", "fifty"],
)
def test_strategy_survives_stale_or_absurd_previous_placements(previous):
    result = _strategy(previous_placements=previous)
    assert result.points_used <= 4
    assert all(result.messages[p.index]["role"] == "user" for p in result.placements)


def test_strategy_counts_huge_emoji_content_with_the_default_counter():
    result = _strategy(messages=[{"role": "user", "content": "🙂" * 20_000}], count_tokens=None)
    assert [p.index for p in result.placements] == [0] and result.message_tokens[0] > 20_000


def test_strategy_names_a_message_with_non_text_content():
    with pytest.raises((TypeError, ValueError), match=r"messages\[0\]"):
        _strategy(messages=[{"role": "user", "content": 42}], count_tokens=None)


def test_strategy_rejects_a_message_without_content():
    with pytest.raises((TypeError, ValueError), match=r"messages\[0\]"):
        _strategy(messages=[{"role": "user", "content": None}], count_tokens=None)


def _bedrock_model(**kwargs):
    import boto3
    from botocore.stub import Stubber

    from promptcache.cache_points import get_model_info
    from promptcache.integrations.bedrock import CachePointChatBedrockConverse

    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    model = CachePointChatBedrockConverse(
        model=CLAUDE,
        client=client,
        region_name="us-east-1",
        cache_model_info=get_model_info(CLAUDE, min_tokens_per_cache_point=2),
        token_counter=lambda m: 5,
        **{"strategy": "multi-point", **kwargs},
    )
    return model, Stubber(client)


_BEDROCK_MESSAGES = [SystemMessage("sys"), HumanMessage("a"), AIMessage("b"), HumanMessage("c")]


def _bedrock_call(model, stub, config=None):
    stub.add_response(
        "converse",
        {
            "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
            "stopReason": "end_turn",
            "metrics": {"latencyMs": 1},
            "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        },
    )
    with stub:
        reply = model.invoke(_BEDROCK_MESSAGES, config=config)
    return reply.content, [p.index for p in model.last_plan.placements]


@pytest.mark.parametrize(
    "garbage",
    [
        b"\xff",
        b"null",
        b"{}",
        b'[{"index": 99}]',
        b'[{"index": 1}]',
        b'[{"index": true}]',
        b'[{"index": 0, "fingerprint": 7}]',
        b"[1, 2]",
    ],
)
def test_bedrock_corrupt_placement_entry_in_redis_is_ignored(garbage, redis_cache, redis_client, redis_prefix):
    from promptcache.integrations.bedrock import PlacementStore

    model, stub = _bedrock_model(placement_store=redis_cache)
    placements = redis_cache.namespaced(PlacementStore.NAMESPACE)
    redis_client.set(placements.full_key(PlacementStore.key("thread:t1", CLAUDE_BASE)), garbage)
    assert _bedrock_call(model, stub, {"configurable": {"thread_id": "t1"}}) == ("ok", [2])


@pytest.mark.parametrize("store", ["dead-redis", "raising"])
def test_bedrock_failing_placement_store_never_breaks_the_call(store):
    from promptcache.integrations.redis import RedisCache

    backend = RedisCache(url=DEAD_REDIS) if store == "dead-redis" else RaisingCache()
    model, stub = _bedrock_model(placement_store=backend)
    assert _bedrock_call(model, stub, {"configurable": {"thread_id": "t"}}) == ("ok", [2])


@pytest.mark.parametrize("thread_id", ["a:b", "{x}", "*", "a\nb", "", 0, {"x": 1}, "🙂" * 1000])
def test_bedrock_odd_thread_ids_work(thread_id):
    model, stub = _bedrock_model()
    assert _bedrock_call(model, stub, {"configurable": {"thread_id": thread_id}}) == ("ok", [2])


@pytest.mark.parametrize(
    "kwargs, named",
    [
        (dict(cache_ttl="2h"), "2h"),
        (dict(cache_ttl="1h"), "1h"),
        (dict(placement_ttl_s=NAN), "nan"),
        (dict(placement_ttl_s=0), "0"),
        (dict(placement_store="redis://x"), "str"),
        (dict(cache_points="maybe"), "maybe"),
    ],
)
def test_cache_point_model_rejects_bad_options(kwargs, named):
    with pytest.raises((TypeError, ValueError), match=named):
        _bedrock_model(**kwargs)


def test_bedrock_cache_points_processor_rejects_impossible_ttl_at_construction():
    from promptcache.integrations.bedrock import BedrockCachePoints

    with pytest.raises(ValueError, match="2h"):
        BedrockCachePoints(cache_ttl="2h")


def test_bedrock_cache_points_processor_rejects_non_model_info():
    from promptcache.integrations.bedrock import BedrockCachePoints

    with pytest.raises(TypeError, match="cache_model_info"):
        BedrockCachePoints(cache_model_info=5)


def test_boolean_and_number_options_are_not_taken_by_truthiness_or_coerced():
    import pydantic

    from promptcache.integrations.bedrock import BedrockCachePoints, CachePointChatBedrockConverse

    with pytest.raises(TypeError, match="cache_tools"):
        BedrockCachePoints(cache_tools="no")
    with pytest.raises(TypeError, match="token_counter"):
        BedrockCachePoints(token_counter=5)
    model = "us.anthropic.claude-sonnet-4-20250514-v1:0"
    for bad in ({"cache_tools": "no"}, {"cache_points": 1}, {"placement_ttl_s": "5"}, {"placement_ttl_s": True}):
        with pytest.raises(pydantic.ValidationError):
            CachePointChatBedrockConverse(model=model, region_name="us-east-1", **bad)
