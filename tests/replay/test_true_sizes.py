"""True token sizes: block sizes fitted to the logged prompt sizes, the unlogged prefix inferred, a broken prefix
split off, and the Claude-calibrated estimate where nothing is logged."""

from __future__ import annotations

from promptcache.replay._prepare import prepare, requests_of
from promptcache.replay._sizes import (
    CLAUDE_CODE_CONTEXT_TOKENS,
    fit_sizes,
    hidden_prefix_size,
    split_on_prefix_change,
)
from promptcache.replay._tokens import CLAUDE, RAW, TokenCounter
from promptcache.replay._transcript import Block, Conversation, Message, Usage

CC = {"format": "claude-code", "hidden_prefix": True}


def _conv(usages: list[Usage | None], meta: dict | None = None) -> Conversation:
    """user, then per usage an assistant reply (carrying it) and a user tool result."""
    messages = [Message("user", (Block("text", "start"),))]
    for i, usage in enumerate(usages):
        messages.append(Message("assistant", (Block("tool_use", '{"a": 1}', "Read", f"t{i}"),), usage=usage))
        messages.append(Message("user", (Block("tool_result", "x" * 40, id=f"t{i}"),)))
    return Conversation("c", "c", (), messages, meta=dict(meta or {}))


def test_hidden_prefix_is_the_first_read_unless_that_read_covers_messages() -> None:
    assert hidden_prefix_size(6003, 5000, 10) == 5000
    # a read past prompt - visible/2 repeats history (a compaction call): the prefix is prompt - visible instead
    assert hidden_prefix_size(10_000, 9_000, 4_000) == 6_000
    assert hidden_prefix_size(10_000, 0, 4_000) == 6_000  # a cold start
    assert hidden_prefix_size(100, 0, 400) == 0


def test_sizes_are_spread_in_proportion_and_sum_to_each_logged_prompt() -> None:
    conv = _conv([Usage(0, 0, 1000), Usage(0, 1000, 600), Usage(0, 1600, 150)])
    # blocks: [user, reply0, result0, reply1, result1, reply2, result2]; requests end at 1, 3, 5 blocks
    fit = fit_sizes(conv, [10, 30, 10, 20, 20, 5, 5], [(1, 1), (3, 3), (5, 5)], None)
    assert fit.tokens == [1000, 450, 150, 75, 75, 5, 5]  # 600 spread 30:10, 150 spread 20:20; the rest kept
    assert (fit.logged_requests, fit.exact_requests) == (3, 3)


def test_a_shrinking_prompt_leaves_its_new_blocks_empty_and_later_ones_exact() -> None:
    conv = _conv([Usage(0, 0, 1000), Usage(0, 0, 900), Usage(0, 0, 1200)])
    fit = fit_sizes(conv, [10, 30, 10, 20, 20, 5, 5], [(1, 1), (3, 3), (5, 5)], None)
    assert fit.tokens[:5] == [1000, 0, 0, 100, 100]
    assert (fit.logged_requests, fit.exact_requests) == (3, 2)


def test_the_hidden_block_takes_the_unlogged_prefix() -> None:
    conv = _conv([Usage(3, 5000, 1000), Usage(1, 6003, 500)], CC)
    counter = TokenCounter(CLAUDE)
    prepared = prepare(conv, counter)
    assert prepared.hidden_end == 1 and prepared.system_end == 1 and prepared.tools_end == 0
    assert prepared.cum[1] == 5000
    assert [r.input_tokens for r in requests_of(prepared, counter)] == [6003, 6504]
    assert prepared.logged_requests == 2


def test_a_first_read_longer_than_the_fixed_part_gets_a_boundary_where_it_ends() -> None:
    # 9,000 read of a 10,000-token first prompt whose messages are estimated at ~4,000: the boundary nearest
    # 9,000 - 6,000 = 3,000 tokens into the messages is made to end exactly at 9,000
    conv = Conversation(
        "c",
        "c",
        (),
        [
            Message("user", (Block("text", "a"), Block("text", "b"), Block("text", "c"))),
            Message("assistant", (Block("text", "ok"),), usage=Usage(0, 9000, 1000)),
        ],
        meta=dict(CC),
    )
    fit = fit_sizes(conv, [0, 1000, 2000, 1000, 5], [(1, 4)], 0)
    assert fit.tokens[:4] == [6000, 1000, 2000, 1000]
    fit = fit_sizes(conv, [0, 1500, 1500, 1000, 5], [(1, 4)], 0)
    assert fit.tokens[:4] == [6000, 1500, 1500, 1000]  # 6,000 + 3,000 = 9,000 at the boundary after block 2


def test_a_broken_prefix_splits_the_conversation() -> None:
    # call 2 reads 7,000 tokens of a prompt that was 26,004: less than half, so everything after 7,000 missed
    usages = [Usage(3, 5000, 1000), Usage(1, 6003, 20000), Usage(3, 7000, 19500), Usage(1, 26503, 100)]
    conv = _conv(usages, CC)
    parts = split_on_prefix_change(conv, [10] * len(conv.messages))
    assert [p.id for p in parts] == ["c", "c~2"]
    assert parts[0].request_ends() == [1, 3] and parts[1].request_ends() == [5, 7]
    assert parts[1].meta["hidden_size"] == 7000 and parts[1].meta["epoch"] == "~2"
    counter = TokenCounter(RAW)
    head, tail = (prepare(p, counter) for p in parts)
    assert head.hashes[1] != tail.hashes[1]  # another unlogged prefix size: another cache entry
    assert tail.cum[1] == 7000
    assert [r.input_tokens for r in requests_of(tail, counter)] == [26503, 26604]
    # a read of the unlogged prefix itself (content the transcript does not show changed): same prefix entry,
    # the messages after it hash differently
    usages[2] = Usage(3, 5000, 21500)
    parts = split_on_prefix_change(_conv(usages, CC), [10] * len(conv.messages))
    head, tail = (prepare(p, counter) for p in parts)
    assert head.hashes[1] == tail.hashes[1] and head.hashes[2] != tail.hashes[2]
    assert split_on_prefix_change(_conv(usages), [10] * len(conv.messages)) == [_conv(usages)]  # not hidden


def test_without_usage_a_claude_code_conversation_counts_its_unlogged_context() -> None:
    counter = TokenCounter(CLAUDE)
    prepared = prepare(_conv([None], CC), counter)
    assert prepared.cum[1] == CLAUDE_CODE_CONTEXT_TOKENS == 25_900
    assert prepared.logged_requests == 0


def test_the_claude_estimate_scales_cl100k_per_block_kind() -> None:
    raw, claude = TokenCounter(RAW), TokenCounter(CLAUDE)
    text = Block("text", "The quick brown fox jumps over the lazy dog. " * 10)
    call = Block("tool_use", '{"path": "src/main.py", "limit": 200}', "Read", "t1")
    result = Block("tool_result", "def main():\n    return 0\n" * 10, id="t1")
    n_text, n_result = raw.block(text), raw.block(result)
    n_call = raw.text(call.text) + raw.text(call.name)
    assert claude.block(text) == round(n_text * 1.22)
    assert claude.block(call) == round(n_call * 1.22) + 72
    assert claude.block(result) == round(n_result * 1.08) + 72
    assert raw.block(call) == n_call  # plain cl100k_base: no overhead
    assert claude.tool_schema({"name": "Read"}) == round(raw.tool_schema({"name": "Read"}) * 1.22)


def test_plain_cl100k_reproduces_the_figures_before_the_calibration() -> None:
    from pathlib import Path

    from promptcache.replay._engine import run_replay

    sample = Path(__file__).resolve().parents[2] / "examples" / "data" / "sample_conversations.json"
    model = "anthropic.claude-sonnet-4-20250514-v1:0"
    raw = run_replay([sample], model, tokens="cl100k")
    # the README table before this change: 60,546 input tokens; langchain-aws and anchored-tail 57,127 read, 3,419
    # written; multi-point 14,640 uncached
    assert (raw.input_tokens, raw.token_estimate) == (60_546, "cl100k")
    for name in ("langchain-aws", "anchored-tail"):
        assert (raw.strategies[name].read_tokens, raw.strategies[name].write_tokens) == (57_127, 3_419)
    assert raw.strategies["multi-point"].input_tokens == 14_640
    calibrated = run_replay([sample], model)
    assert (calibrated.input_tokens, calibrated.token_estimate) == (87_564, "claude")  # 97,781 before the refit


def _timed(conv: Conversation, gaps_s: list[float]) -> Conversation:
    """``conv`` with its assistant replies ``gaps_s`` seconds apart (the first at t=1000)."""
    at = 1000.0
    replies = [m for m in conv.messages if m.role == "assistant"]
    for message, gap in zip(replies, [0.0, *gaps_s]):
        at += gap
        message.timestamp = at
    return conv


def test_a_read_short_of_what_the_previous_call_cached_splits_even_above_half() -> None:
    # call 2 cached 26,003 (6,003 read + 20,000 written); call 3 reads 18,000 of it (69%, more than half), 60 s
    # later with 1-hour writes: expiry cannot explain it, so the prefix broke at 18,000
    usages = [Usage(3, 5000, 1000, 1000), Usage(1, 6003, 20000, 20000), Usage(3, 18000, 8500, 8500)]
    parts = split_on_prefix_change(_timed(_conv(usages, CC), [60, 60]), [10] * 7)
    assert [p.id for p in parts] == ["c", "c~2"] and parts[1].meta["hidden_size"] == 18000


def test_a_short_read_after_the_write_expired_is_left_to_the_simulator() -> None:
    # the same reads, but 400 s after 5-minute writes: the cache entry expired, the simulator's TTL explains it
    usages = [Usage(3, 5000, 1000), Usage(1, 6003, 20000), Usage(3, 18000, 8500)]
    conv = _timed(_conv(usages, CC), [60, 400])
    assert split_on_prefix_change(conv, [10] * 7) == [conv]


def test_unlogged_prefix_without_usage_per_conversation_kind() -> None:
    from promptcache.replay._sizes import unlogged_prefix_tokens

    def conv(model: str, **meta: object) -> Conversation:
        messages = [Message("user", (Block("text", "hi"),)), Message("assistant", (Block("text", "ok"),), model=model)]
        return Conversation("c", "c", (), messages, meta={"format": "claude-code", "hidden_prefix": True, **meta})

    assert unlogged_prefix_tokens(conv("claude-opus-4-6", agent="", context_start="session")) == 25_900
    assert unlogged_prefix_tokens(conv("claude-opus-4-6", agent="agent-a881341")) == 11_224  # a Task sub-agent
    assert unlogged_prefix_tokens(conv("claude-opus-4-6", agent="agent-acompact-1")) == 25_900  # the compaction
    assert unlogged_prefix_tokens(conv("claude-opus-4-6", context_start="compact_boundary")) == 33_300
    assert unlogged_prefix_tokens(conv("claude-opus-4-7", agent="")) == 33_670  # newer tokenizer: x1.30
    assert unlogged_prefix_tokens(conv("claude-opus-4-6", hidden_size=17_842)) == 17_842
