"""The prompt-cache simulator's rules, pinned on hand-made requests (token counts chosen so costs are exact)."""

from __future__ import annotations

import pytest

from promptcache._pricing import price_for
from promptcache.replay._models import cache_rules
from promptcache.replay._simulator import Checkpoint, PromptCacheSimulator

SONNET4 = "anthropic.claude-sonnet-4-20250514-v1:0"  # min 1,024 tokens, 5-minute TTL only, $3 / 1M input
SONNET45 = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"  # also offers the 1-hour TTL
NOVA = "amazon.nova-pro-v1:0"


def blocks(tokens: list[int], tag: str = "a") -> tuple[list[int], list[bytes]]:
    """cum/hashes for blocks with the given token counts; the same ``tag`` means the same prefix content."""
    cum, hashes = [0], [b""]
    for i, n in enumerate(tokens, start=1):
        cum.append(cum[-1] + n)
        hashes.append(f"{tag}:{i}".encode())
    return cum, hashes


def sim(model: str = SONNET4) -> PromptCacheSimulator:
    return PromptCacheSimulator(cache_rules(model), price_for(model))


def test_checkpoint_below_the_cumulative_minimum_caches_nothing() -> None:
    s = sim()
    cum, hashes = blocks([600, 400])  # prefix up to block 2 = 1,000 < 1,024
    cost = s.simulate(cum, hashes, 2, [Checkpoint(2)], 0.0)
    assert (cost.input_tokens, cost.read_tokens, cost.write_tokens) == (1000, 0, 0)
    assert cost.cost_usd == pytest.approx(1000 * 3.0 / 1e6)
    again = s.simulate(cum, hashes, 2, [Checkpoint(2)], 1.0)
    assert again.read_tokens == 0


def test_minimum_is_cumulative_not_per_segment() -> None:
    s = sim()
    cum, hashes = blocks([1100, 10, 5])
    # The second checkpoint's own segment is 15 tokens, but its prefix (1,115) reaches the minimum: both cache.
    cost = s.simulate(cum, hashes, 3, [Checkpoint(1), Checkpoint(3)], 0.0)
    assert (cost.input_tokens, cost.write_tokens) == (0, 1115)
    assert s.live_entries(0.0) == 2


def test_write_then_read_then_write_only_the_new_tail() -> None:
    s = sim()
    cum, hashes = blocks([1200, 100, 300, 50])
    first = s.simulate(cum, hashes, 2, [Checkpoint(2)], 0.0)
    assert (first.input_tokens, first.read_tokens, first.write_tokens) == (0, 0, 1300)
    assert first.cost_usd == pytest.approx(1300 * 3.75 / 1e6)
    second = s.simulate(cum, hashes, 4, [Checkpoint(2), Checkpoint(3)], 10.0)
    # reads 1,300, writes blocks 3 (300), block 4 (50) is after the last checkpoint: plain input
    assert (second.read_tokens, second.write_tokens, second.input_tokens) == (1300, 300, 50)
    assert second.cost_usd == pytest.approx((1300 * 0.30 + 300 * 3.75 + 50 * 3.0) / 1e6)
    assert second.cache_hit and second.read_boundary == 2


def test_lookback_finds_an_entry_20_blocks_back_but_not_21() -> None:
    tokens = [1100] + [10] * 30
    cum, hashes = blocks(tokens)
    s = sim()
    s.simulate(cum, hashes, 1, [Checkpoint(1)], 0.0)  # entry at boundary 1
    hit = s.simulate(cum, hashes, 21, [Checkpoint(21)], 1.0)  # 20 blocks after the entry
    assert hit.read_tokens == 1100 and hit.write_tokens == 200
    s2 = sim()
    s2.simulate(cum, hashes, 1, [Checkpoint(1)], 0.0)
    miss = s2.simulate(cum, hashes, 22, [Checkpoint(22)], 1.0)  # 21 blocks after: outside the window
    assert miss.read_tokens == 0 and miss.write_tokens == 1310


def test_longest_prefix_over_all_checkpoints_wins() -> None:
    s = sim()
    cum, hashes = blocks([1100, 100, 100, 100])
    s.simulate(cum, hashes, 3, [Checkpoint(1), Checkpoint(3)], 0.0)
    cost = s.simulate(cum, hashes, 4, [Checkpoint(1), Checkpoint(4)], 5.0)
    assert cost.read_tokens == 1300 and cost.write_tokens == 100


def test_entries_of_other_content_do_not_match() -> None:
    s = sim()
    cum, hashes = blocks([1100, 100])
    s.simulate(cum, hashes, 2, [Checkpoint(2)], 0.0)
    other_cum, other_hashes = blocks([1100, 100], tag="b")
    assert s.simulate(other_cum, other_hashes, 2, [Checkpoint(2)], 1.0).read_tokens == 0


def test_entries_expire_after_the_ttl_and_a_hit_refreshes_them() -> None:
    cum, hashes = blocks([1100, 100])
    s = sim()
    s.simulate(cum, hashes, 1, [Checkpoint(1)], 0.0)
    assert s.simulate(cum, hashes, 1, [Checkpoint(1)], 299.0).read_tokens == 1100  # refreshed: now lives to 599
    assert s.simulate(cum, hashes, 1, [Checkpoint(1)], 598.0).read_tokens == 1100
    assert s.simulate(cum, hashes, 1, [Checkpoint(1)], 898.5).read_tokens == 0  # 300.5 s after the last use
    s2 = sim()
    s2.simulate(cum, hashes, 1, [Checkpoint(1)], 0.0)
    late = s2.simulate(cum, hashes, 1, [Checkpoint(1)], 300.0)
    assert late.read_tokens == 0 and late.write_tokens == 1100


def test_one_hour_ttl_prices_and_lifetime() -> None:
    s = sim(SONNET45)
    cum, hashes = blocks([1100, 900, 50])
    cost = s.simulate(cum, hashes, 3, [Checkpoint(1, 3600.0, "system"), Checkpoint(2, 300.0)], 0.0)
    assert (cost.write_tokens, cost.write_1h_tokens, cost.input_tokens) == (2000, 1100, 50)
    # a us. (geographic) profile of a 4.5+ model: the global price plus Bedrock's 10 % regional premium
    assert cost.cost_usd == pytest.approx((1100 * 6.6 + 900 * 4.125 + 50 * 3.3) / 1e6)
    later = s.simulate(cum, hashes, 3, [Checkpoint(1, 3600.0, "system"), Checkpoint(2, 300.0)], 1800.0)
    assert later.read_tokens == 1100 and later.write_tokens == 900  # the 5-minute entry is gone, the 1-hour one not


def test_nova_reads_at_a_quarter_and_writes_at_input_price() -> None:
    s = sim(NOVA)  # $0.80 input, read 0.25x, write 1x; minimum 1,000
    cum, hashes = blocks([1000, 200])
    first = s.simulate(cum, hashes, 2, [Checkpoint(1)], 0.0)
    assert first.cost_usd == pytest.approx((1000 * 0.80 + 200 * 0.80) / 1e6)
    second = s.simulate(cum, hashes, 2, [Checkpoint(1)], 1.0)
    assert second.cost_usd == pytest.approx((1000 * 0.20 + 200 * 0.80) / 1e6)


@pytest.mark.parametrize(
    ("points", "message"),
    [
        ([Checkpoint(i) for i in range(1, 6)], "at most 4"),
        ([Checkpoint(2), Checkpoint(2)], "two cache points"),
        ([Checkpoint(9)], "outside the request"),
        ([Checkpoint(1, 3600.0)], "not offered"),
    ],
)
def test_invalid_checkpoints_raise(points: list[Checkpoint], message: str) -> None:
    cum, hashes = blocks([1100] * 6)
    with pytest.raises(ValueError, match=message):
        sim().simulate(cum, hashes, 6, points, 0.0)


def test_ttls_must_not_increase_along_the_prompt() -> None:
    cum, hashes = blocks([1100, 100])
    with pytest.raises(ValueError, match="non-increasing"):
        sim(SONNET45).simulate(cum, hashes, 2, [Checkpoint(1, 300.0), Checkpoint(2, 3600.0)], 0.0)
