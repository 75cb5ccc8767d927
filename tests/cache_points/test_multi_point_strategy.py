"""MultiPointStrategy against the five examples of Roo-Code's cache-strategy documentation (exact), plus the
guards it lacks."""

from __future__ import annotations

import logging

import pytest

from promptcache.cache_points import (
    CachePointPlacement,
    CacheStrategyConfig,
    MultiPointStrategy,
    get_model_info,
)
from promptcache.cache_points import _model_info as model_info_module

# The documentation's model: 3 points, 100-token minimum, system + messages.
SEED_MODEL = get_model_info("anthropic.claude-3-7-sonnet-20250219-v1:0").with_overrides(
    max_tokens=4096,
    context_window=200_000,
    max_cache_points=3,
    min_tokens_per_cache_point=100,
    cachable_fields=("system", "messages"),
)
SYSTEM = "You are a helpful assistant."

# Examples 1-3: the documentation's per-message "~N tokens" comments.
M0 = ("user", "Tell me about machine learning.", 50)
M1 = ("assistant", "Machine learning is a field of study...", 150)
M2 = ("user", "What about deep learning?", 40)
M3 = ("assistant", "Deep learning is a subset of machine learning...", 160)
M4 = ("user", "How do neural networks work?", 50)
M5 = ("assistant", "Neural networks are composed of layers of nodes...", 180)
M6 = ("user", "Can you explain backpropagation?", 40)
M7 = ("assistant", "Backpropagation is an algorithm used to train neural networks...", 170)

# Examples 4-5: "Previous 10 messages" with counts chosen to reproduce the documentation's segments 240 / 440 / 260, and the
# assistant reply at index 9 under 102 tokens (so Example 4's tail, 100 + 80 + 130 = 310, stays under 1.2 x 260):
#   [0..2] 50 + 150 + 40 = 240;  [3..6] 160 + 50 + 180 + 50 = 440;  [7..8] 170 + 90 = 260;  [9] 100.
PREVIOUS_10 = [
    ("user", "Tell me about machine learning.", 50),
    ("assistant", "Machine learning is a field of study...", 150),
    ("user", "What about deep learning?", 40),
    ("assistant", "Deep learning is a subset of machine learning...", 160),
    ("user", "How do neural networks work?", 50),
    ("assistant", "Neural networks are composed of layers of nodes...", 180),
    ("user", "Can you explain backpropagation?", 50),
    ("assistant", "Backpropagation is an algorithm used to train neural networks...", 170),
    ("user", "What are some applications of deep learning?", 90),
    ("assistant", "Deep learning has many applications including...", 100),
]
EX4_NEW = [
    ("user", "Can you explain the difference between supervised and unsupervised learning in detail?", 80),
    (
        "assistant",
        "Certainly! Supervised learning and unsupervised learning are two fundamental paradigms in "
        "machine learning with...",
        130,
    ),
]
EX5_NEW = [
    ("user", "Can you provide a detailed example of implementing a neural network for image classification?", 100),
    (
        "assistant",
        "Certainly! Here's a detailed example of implementing a convolutional neural network (CNN) for "
        "image classification using TensorFlow and Keras...",
        300,
    ),
]
EX3_PLACEMENTS = [
    CachePointPlacement(2, "message", 240),
    CachePointPlacement(6, "message", 440),
    CachePointPlacement(8, "message", 260),
]


def _build(rows):
    tokens = {SYSTEM: 10}
    messages = []
    for role, text, count in rows:
        tokens[text] = count
        messages.append({"role": role, "content": text})

    def count_tokens(message):
        content = message["content"]
        return tokens[content if isinstance(content, str) else content[0]["text"]]

    return messages, count_tokens


def _run(rows, previous=None, model=SEED_MODEL, system=SYSTEM, **kw):
    messages, count = _build(rows)
    config = CacheStrategyConfig(model, system, messages, previous_placements=previous, count_tokens=count, **kw)
    return MultiPointStrategy(config).determine_optimal_cache_points()


def _structure(result):
    """The documentation's "Resulting Message Structure" rendering."""
    lines = []
    for message in result.messages:
        texts = [b["text"] for b in message["content"] if "text" in b]
        lines.append(f"[{message['role'].capitalize()}]: {' '.join(texts)}")
        if any("cachePoint" in b for b in message["content"]):
            lines.append("[CACHE POINT]")
    return lines


def test_example_1_initial_placement():
    result = _run([M0, M1, M2, M3])
    assert result.placements == [CachePointPlacement(2, "message", 240)]
    assert result.system_cache_point is False  # 10 tokens < 100
    assert result.system == [{"text": SYSTEM}]
    assert _structure(result) == [
        "[User]: Tell me about machine learning.",
        "[Assistant]: Machine learning is a field of study...",
        "[User]: What about deep learning?",
        "[CACHE POINT]",
        "[Assistant]: Deep learning is a subset of machine learning...",
    ]


def test_example_2_one_exchange_preserves_and_adds():
    result = _run([M0, M1, M2, M3, M4, M5], previous=[CachePointPlacement(2, "message", 240)])
    # tokens_covered per the documentation's definition: messages 3..4 = 160 + 50 = 210 (the documentation prints 230, the newest
    # exchange 50 + 180).
    assert result.placements == [CachePointPlacement(2, "message", 240), CachePointPlacement(4, "message", 210)]
    assert _structure(result) == [
        "[User]: Tell me about machine learning.",
        "[Assistant]: Machine learning is a field of study...",
        "[User]: What about deep learning?",
        "[CACHE POINT]",
        "[Assistant]: Deep learning is a subset of machine learning...",
        "[User]: How do neural networks work?",
        "[CACHE POINT]",
        "[Assistant]: Neural networks are composed of layers of nodes...",
    ]


def test_example_3_another_exchange_uses_the_last_slot():
    previous = [CachePointPlacement(2, "message", 240), CachePointPlacement(4, "message", 230)]
    result = _run([M0, M1, M2, M3, M4, M5, M6, M7], previous=previous)
    # Index 4 is recomputed to 210 (3..4); index 6 covers 5..6 = 180 + 40 = 220 (the documentation prints 210 = 40 + 170).
    assert result.placements == [
        CachePointPlacement(2, "message", 240),
        CachePointPlacement(4, "message", 210),
        CachePointPlacement(6, "message", 220),
    ]
    assert _structure(result)[-3:] == [
        "[User]: Can you explain backpropagation?",
        "[CACHE POINT]",
        "[Assistant]: Backpropagation is an algorithm used to train neural networks...",
    ]
    assert sum(line == "[CACHE POINT]" for line in _structure(result)) == 3


def test_example_4_small_new_messages_keep_all_points():
    # New tokens after the last point = 100 + 80 + 130 = 310 <= 1.2 x 260 = 312: no reallocation.
    result = _run(PREVIOUS_10 + EX4_NEW, previous=EX3_PLACEMENTS)
    assert result.placements == EX3_PLACEMENTS
    assert _structure(result) == [
        "[User]: Tell me about machine learning.",
        "[Assistant]: Machine learning is a field of study...",
        "[User]: What about deep learning?",
        "[CACHE POINT]",
        "[Assistant]: Deep learning is a subset of machine learning...",
        "[User]: How do neural networks work?",
        "[Assistant]: Neural networks are composed of layers of nodes...",
        "[User]: Can you explain backpropagation?",
        "[CACHE POINT]",
        "[Assistant]: Backpropagation is an algorithm used to train neural networks...",
        "[User]: What are some applications of deep learning?",
        "[CACHE POINT]",
        "[Assistant]: Deep learning has many applications including...",
        "[User]: Can you explain the difference between supervised and unsupervised learning in detail?",
        "[Assistant]: Certainly! Supervised learning and unsupervised learning are two fundamental paradigms in "
        "machine learning with...",
    ]


def test_example_5_large_new_messages_reallocate_the_smallest_gap():
    # New tokens = 100 + 100 + 300 = 500 > 312: the point closing the smallest gap (index 8, 260) moves to index 10.
    result = _run(PREVIOUS_10 + EX5_NEW, previous=EX3_PLACEMENTS)
    # Index 10 covers 7..10 = 170 + 90 + 100 + 100 = 460 (the documentation prints 660, counting the new pair 100 + 300).
    assert result.placements == [
        CachePointPlacement(2, "message", 240),
        CachePointPlacement(6, "message", 440),
        CachePointPlacement(10, "message", 460),
    ]
    lines = _structure(result)
    assert (
        lines[lines.index("[User]: What are some applications of deep learning?") + 1]
        == "[Assistant]: Deep learning has many applications including..."
    )
    assert lines[-3:] == [
        "[User]: Can you provide a detailed example of implementing a neural network for image classification?",
        "[CACHE POINT]",
        "[Assistant]: Certainly! Here's a detailed example of implementing a convolutional neural network (CNN) "
        "for image classification using TensorFlow and Keras...",
    ]


def test_reallocation_threshold_is_strictly_more_than_twenty_percent():
    # Tail exactly 312 = 1.2 x 260 -> unchanged; 313 -> reallocated.
    rows = PREVIOUS_10[:9] + [("assistant", "tail", 102), ("user", "q", 80), ("assistant", "r", 130)]
    assert [p.index for p in _run(rows, previous=EX3_PLACEMENTS).placements] == [2, 6, 8]
    rows[-1] = ("assistant", "r", 131)
    assert [p.index for p in _run(rows, previous=EX3_PLACEMENTS).placements] == [2, 6, 10]


def test_inputs_are_not_modified():
    messages, count = _build([M0, M1, M2, M3])
    before = [dict(m) for m in messages]
    MultiPointStrategy(
        CacheStrategyConfig(SEED_MODEL, SYSTEM, messages, count_tokens=count)
    ).determine_optimal_cache_points()
    assert messages == before


# -- system point and budget ------------------------------------------------------------------------------------
def test_system_point_first_then_messages_within_budget():
    big = "BIG SYSTEM"
    messages, count = _build([M0, M1, M2, M3])
    counts = lambda m: 500 if m["content"] == big else count(m)  # noqa: E731
    result = MultiPointStrategy(
        CacheStrategyConfig(SEED_MODEL.with_overrides(max_cache_points=1), big, messages, count_tokens=counts)
    ).determine_optimal_cache_points()
    assert result.system == [{"text": big}, {"cachePoint": {"type": "default"}}]
    assert result.placements == []
    result = MultiPointStrategy(
        CacheStrategyConfig(SEED_MODEL, big, messages, count_tokens=counts)
    ).determine_optimal_cache_points()
    assert result.system_cache_point and result.placements == [CachePointPlacement(2, "message", 240)]
    assert result.points_used == 2


def test_max_points_budget_trims_previous_placements():
    # Only 2 slots left (e.g. tools + a manual point used 2 of 4): the point closing the smallest gap goes.
    # [2, 6, 8] -> [2, 6] (8 closed the smallest gap, 260). Both slots are then used: the new tokens after 6
    # (170 + 90 + 100 + 80 + 130 = 570) exceed 1.2 x 440 = 528, so 6 moves to the newest user message (3..10 = 880).
    result = _run(PREVIOUS_10 + EX4_NEW, previous=EX3_PLACEMENTS, max_points=2)
    assert result.placements == [CachePointPlacement(2, "message", 240), CachePointPlacement(10, "message", 880)]
    assert result.points_used == 2
    # With 170 + 90 + 100 + 60 + 60 = 480 tokens after 6 (under 528), the trimmed pair stays.
    rows = PREVIOUS_10 + [("user", "q", 60), ("assistant", "r", 60)]
    assert _run(rows, previous=EX3_PLACEMENTS, max_points=2).placements == [
        CachePointPlacement(2, "message", 240),
        CachePointPlacement(6, "message", 440),
    ]


def test_max_cache_points_zero_and_one():
    assert _run([M0, M1, M2, M3], model=SEED_MODEL.with_overrides(max_cache_points=0)).placements == []
    one = SEED_MODEL.with_overrides(max_cache_points=1)
    first = _run([M0, M1, M2, M3], model=one)
    assert first.placements == [CachePointPlacement(2, "message", 240)]
    # One slot: no gap to compare, the point follows the conversation to the newest user message.
    second = _run([M0, M1, M2, M3, M4, M5], previous=first.placements, model=one)
    assert second.placements == [CachePointPlacement(4, "message", 450)]


def test_bedrock_ceiling_of_four_even_if_model_info_says_more():
    many = SEED_MODEL.with_overrides(max_cache_points=10, min_tokens_per_cache_point=1)
    rows = [M0, M1, M2, M3, M4, M5, M6, M7] + [("user", f"u{i}", 5) for i in range(6)]
    result = _run(rows, model=many)
    previous = result.placements
    for extra in range(6):
        rows = rows + [("assistant", f"a{extra}", 5), ("user", f"x{extra}", 500)]
        result = _run(rows, previous=previous, model=many)
        previous = result.placements
        assert len(result.placements) <= 4


# -- edge cases -----------------------------------------------------------------------------------------------
def test_empty_history_one_message_and_no_user_message():
    assert _run([]).placements == [] and _run([]).messages == []
    assert _run([("user", "long question", 150)]).placements == [CachePointPlacement(0, "message", 150)]
    assert _run([("user", "short", 99)]).placements == []
    assert _run([("assistant", "a", 500), ("assistant", "b", 500)]).placements == []


def test_disabled_or_unsupported_gives_no_points():
    assert _run([M0, M1, M2, M3], use_prompt_cache=False).placements == []
    off = SEED_MODEL.with_overrides(supports_prompt_cache=False)
    result = _run([M0, M1, M2, M3], model=off)
    assert result.placements == [] and not any("cachePoint" in b for m in result.messages for b in m["content"])
    no_messages_field = SEED_MODEL.with_overrides(cachable_fields=("system",))
    assert _run([M0, M1, M2, M3], model=no_messages_field).placements == []


def test_stale_placements_are_dropped_not_applied():
    # History summarised to 4 messages: index 6 and 8 no longer exist, index 1 is an assistant message.
    stale = [
        CachePointPlacement(1, "message", 200),
        CachePointPlacement(6, "message", 440),
        CachePointPlacement(8, "message", 260),
    ]
    result = _run([M0, M1, M2, M3], previous=stale)
    assert result.placements == [CachePointPlacement(2, "message", 240)]


def test_stale_placements_with_fingerprints_are_rebased():
    first = _run(PREVIOUS_10 + EX4_NEW, previous=EX3_PLACEMENTS)
    assert all(p.fingerprint for p in first.placements)
    # The first exchange (indices 0..1) is dropped: every message moves two places down.
    truncated = (PREVIOUS_10 + EX4_NEW)[2:]
    result = _run(truncated, previous=first.placements)
    # 2 -> 0 (40 tokens, under the minimum: merged into the next), 6 -> 4, 8 -> 6; then the free slot goes to the
    # new user message at 8.
    assert result.placements == [
        CachePointPlacement(4, "message", 480),
        CachePointPlacement(6, "message", 260),
        CachePointPlacement(8, "message", 180),
    ]


def test_fingerprint_mismatch_without_a_match_is_dropped():
    first = _run([M0, M1, M2, M3])
    edited = [M0, M1, ("user", "What about reinforcement learning?", 40), M3]
    result = _run(edited, previous=first.placements)
    assert result.placements == [CachePointPlacement(2, "message", 240)]  # recomputed fresh, same slot
    assert result.placements[0].fingerprint != first.placements[0].fingerprint


def test_nova_skips_user_messages_ending_in_tool_result_or_image():
    nova = get_model_info("us.amazon.nova-pro-v1:0").with_overrides(min_tokens_per_cache_point=100)
    messages = [
        {"role": "user", "content": [{"text": "look"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "r"}]}}]},
        {"role": "user", "content": [{"text": "see"}, {"image": {"format": "png", "source": {"bytes": b"x"}}}]},
    ]
    count = lambda m: 100  # noqa: E731
    result = MultiPointStrategy(
        CacheStrategyConfig(nova, None, messages, count_tokens=count)
    ).determine_optimal_cache_points()
    assert result.placements == [CachePointPlacement(0, "message", 100)]
    claude = SEED_MODEL
    result = MultiPointStrategy(
        CacheStrategyConfig(claude, None, messages, count_tokens=count)
    ).determine_optimal_cache_points()
    assert result.placements == [CachePointPlacement(3, "message", 400)]


# -- bad input -------------------------------------------------------------------------------------------------
def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match=r"cachable_fields has unknown field\(s\) \['toolz'\]"):
        SEED_MODEL.with_overrides(cachable_fields=("system", "toolz"))
    with pytest.raises(ValueError, match="min_tokens_per_cache_point must be >= 0, got -1"):
        SEED_MODEL.with_overrides(min_tokens_per_cache_point=-1)
    with pytest.raises(ValueError, match=r"cache TTL '1h' is not allowed for model 'anthropic.claude-3-7-sonnet"):
        CacheStrategyConfig(SEED_MODEL, None, [], ttl="1h")
    with pytest.raises(ValueError, match=r"allowed_ttls has unknown TTL\(s\) \['2h'\]"):
        SEED_MODEL.with_overrides(allowed_ttls=("5m", "2h"))
    with pytest.raises(ValueError, match=r"messages\[1\]\['role'\] must be 'user' or 'assistant', got 'system'"):
        CacheStrategyConfig(SEED_MODEL, None, [{"role": "user", "content": "a"}, {"role": "system", "content": "b"}])
    with pytest.raises(ValueError, match=r"placement index must be an int >= 0, got -2"):
        CacheStrategyConfig(SEED_MODEL, None, [], previous_placements=[{"index": -2}])
    with pytest.raises(ValueError, match=r"count_tokens\(messages\[0\]\) must return an int >= 0, got -5"):
        MultiPointStrategy(
            CacheStrategyConfig(SEED_MODEL, None, [{"role": "user", "content": "a"}], count_tokens=lambda m: -5)
        )
    with pytest.raises(TypeError, match=r"ModelInfo has no field\(s\) \['min_tokens'\]"):
        SEED_MODEL.with_overrides(min_tokens=5)


# -- model table -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "model_id, base, min_tokens, fields, ttls",
    [
        (
            "anthropic.claude-3-5-sonnet-20241022-v2:0",
            "anthropic.claude-3-5-sonnet-20241022-v2:0",
            1024,
            ("system", "messages", "tools"),
            ("5m",),
        ),
        (
            "us.anthropic.claude-3-5-haiku-20241022-v1:0",
            "anthropic.claude-3-5-haiku-20241022-v1:0",
            2048,
            ("system", "messages", "tools"),
            ("5m",),
        ),
        (
            "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            1024,
            ("system", "messages", "tools"),
            ("5m", "1h"),
        ),
        (
            "apac.anthropic.claude-sonnet-4-20250514-v1:0",
            "anthropic.claude-sonnet-4-20250514-v1:0",
            1024,
            ("system", "messages", "tools"),
            ("5m",),
        ),
        (
            "global.anthropic.claude-haiku-4-5-20251001-v1:0",
            "anthropic.claude-haiku-4-5-20251001-v1:0",
            4096,
            ("system", "messages", "tools"),
            ("5m", "1h"),
        ),
        (
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-opus-4-1-20250805-v1:0",
            "anthropic.claude-opus-4-1-20250805-v1:0",
            1024,
            ("system", "messages", "tools"),
            ("5m",),
        ),
        (
            "arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-micro-v1:0",
            "amazon.nova-micro-v1:0",
            1000,
            ("system", "messages"),
            ("5m",),
        ),
        ("us.amazon.nova-premier-v1:0", "amazon.nova-premier-v1:0", 1000, ("system", "messages"), ("5m",)),
        (
            "global.anthropic.claude-opus-4-6-v1",
            "anthropic.claude-opus-4-6-v1",
            4096,
            ("system", "messages", "tools"),
            ("5m", "1h"),
        ),
    ],
)
def test_model_table_resolves_prefixes_and_arns(model_id, base, min_tokens, fields, ttls):
    info = get_model_info(model_id)
    assert (
        info.model_id,
        info.min_tokens_per_cache_point,
        info.cachable_fields,
        info.allowed_ttls,
        info.max_cache_points,
        info.supports_prompt_cache,
    ) == (base, min_tokens, fields, ttls, 4, True)
    assert "prompt-caching" in info.source


def test_unknown_model_conservative_default_and_one_warning(caplog, monkeypatch):
    monkeypatch.setattr(model_info_module, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="promptcache.cache_points"):
        first = get_model_info("us.anthropic.claude-future-9-v1:0")
        get_model_info("eu.anthropic.claude-future-9-v1:0")
        other = get_model_info("meta.llama3-70b-instruct-v1:0")
    assert [r.getMessage().split(" is not")[0] for r in caplog.records] == [
        "promptcache: model 'us.anthropic.claude-future-9-v1:0'",
        "promptcache: model 'meta.llama3-70b-instruct-v1:0'",
    ]
    assert (first.min_tokens_per_cache_point, first.max_cache_points, first.allowed_ttls) == (4096, 4, ("5m",))
    assert (other.supports_prompt_cache, other.max_cache_points) == (False, 0)
    assert get_model_info("amazon.nova-lite-v1:0", min_tokens_per_cache_point=2000).min_tokens_per_cache_point == 2000
