"""Placement strategies on hand-made conversations: exact checkpoints, and costs through the simulator."""

from __future__ import annotations

import pytest

from promptcache._pricing import price_for
from promptcache.replay._models import cache_rules
from promptcache.replay._ours import AnchoredTailStrategy
from promptcache.replay._prepare import prepare, requests_of, schedule
from promptcache.replay._registry import STRATEGIES, make_strategy
from promptcache.replay._simulator import Checkpoint, PromptCacheSimulator
from promptcache.replay._tokens import TokenCounter
from promptcache.replay._transcript import Block, Conversation, Message

SONNET4 = "anthropic.claude-sonnet-4-20250514-v1:0"
NOVA = "amazon.nova-pro-v1:0"
WORD = " alpha"  # exactly one cl100k token per repetition


def text(n: int) -> tuple[Block, ...]:
    return (Block("text", WORD * n),)


def agent_conversation(conv_id: str = "c", system_tokens: int = 1100, first: int = 50) -> Conversation:
    """system | user | assistant(tool call) | tool result | assistant | user | assistant."""
    return Conversation(
        conv_id,
        conv_id,
        text(system_tokens),
        [
            Message("user", text(first)),
            Message("assistant", (Block("tool_use", '{"q":1}', "lookup", "t1"),)),
            Message("tool", (Block("tool_result", WORD * 200, id="t1"),)),
            Message("assistant", text(30)),
            Message("user", text(40)),
            Message("assistant", text(20)),
        ],
    )


def requests(*convs: Conversation, gap_s: float = 10.0):
    counter = TokenCounter()
    return schedule([requests_of(prepare(c, counter), counter) for c in convs], gap_s)


def test_token_counts_and_request_boundaries() -> None:
    reqs = requests(agent_conversation())
    assert [r.n_blocks for r in reqs] == [2, 4, 6]  # system=1 block, then one block per message
    # the tool call counts its name ("lookup": 1 token) and arguments ('{"q":1}': 5 tokens)
    assert [r.input_tokens for r in reqs] == [1150, 1150 + 6 + 200, 1356 + 30 + 40]
    assert [r.time_s for r in reqs] == [10.0, 20.0, 30.0]
    assert [[g.end for g in r.groups] for r in reqs] == [[2], [2, 3, 4], [2, 3, 4, 5, 6]]


def test_langchain_aws_places_system_last_and_penultimate() -> None:
    strategy = make_strategy("langchain-aws", cache_rules(SONNET4))
    last = requests(agent_conversation())[-1]
    assert strategy.place(last) == [Checkpoint(1, 300.0, "system"), Checkpoint(6), Checkpoint(5)]


def test_langchain_aws_on_nova_skips_a_last_message_with_tool_blocks() -> None:
    strategy = make_strategy("langchain-aws", cache_rules(NOVA))
    second = requests(agent_conversation())[1]  # ends with the tool result
    assert strategy.place(second) == [Checkpoint(1, 300.0, "system")]  # Nova: no penultimate point either


def test_last_message_strategy() -> None:
    strategy = make_strategy("last-message", cache_rules(SONNET4))
    assert [strategy.place(r) for r in requests(agent_conversation())] == [
        [Checkpoint(2)],
        [Checkpoint(4)],
        [Checkpoint(6)],
    ]


def test_anchored_tail_points() -> None:
    rules = cache_rules(SONNET4)
    strategy = AnchoredTailStrategy(rules, price_for(SONNET4))
    placed = [strategy.place(r) for r in requests(agent_conversation())]
    assert placed == [
        [Checkpoint(1, 300.0, "system"), Checkpoint(2)],
        [Checkpoint(1, 300.0, "system"), Checkpoint(3), Checkpoint(4)],  # spare slot: the message end before
        [Checkpoint(1, 300.0, "system"), Checkpoint(5), Checkpoint(6)],
    ]


def test_anchored_tail_skips_an_anchor_below_the_minimum() -> None:
    strategy = AnchoredTailStrategy(cache_rules(SONNET4), price_for(SONNET4))
    first = requests(agent_conversation(system_tokens=500))[0]
    assert strategy.place(first) == [Checkpoint(2)]


def test_anchored_tail_bridges_a_tail_beyond_the_lookback() -> None:
    many_calls = tuple(Block("tool_use", "{}", "f", f"t{i}") for i in range(12))
    results = [Message("tool", (Block("tool_result", "ok", id=f"t{i}"),)) for i in range(12)]
    conv = Conversation(
        "wide",
        "wide",
        text(1100),
        [Message("user", text(5)), Message("assistant", many_calls), *results, Message("assistant", text(3))],
    )
    strategy = AnchoredTailStrategy(cache_rules(SONNET4), price_for(SONNET4))
    first, second = requests(conv)
    strategy.place(first)
    points = strategy.place(second)  # the tail moved 24 blocks: the previous tail (2) is pinned as a bridge
    assert [p.boundary for p in points] == [1, 2, 14, 26]  # 14: the spare slot at the assistant message's end
    sim = PromptCacheSimulator(cache_rules(SONNET4), price_for(SONNET4))
    sim.simulate(first.prepared.cum, first.prepared.hashes, first.n_blocks, [Checkpoint(1), Checkpoint(2)], 0.0)
    cost = sim.simulate(second.prepared.cum, second.prepared.hashes, second.n_blocks, points, 1.0)
    assert cost.read_tokens == first.input_tokens


def test_anchored_tail_writes_at_the_configured_ttl_however_late_reuse_comes() -> None:
    """The shipped wrapper has no reuse learning: one-request conversations 10 minutes apart still get the anchor and
    the tail at 5 minutes (the replay prices what ships; the miss causes say what the 1-hour TTL would recover)."""
    rules, price = cache_rules(SONNET4), price_for(SONNET4)
    convs = [
        Conversation(f"c{i}", f"c{i}", text(1100), [Message("user", text(50 + i)), Message("assistant", text(5))])
        for i in range(14)
    ]
    strategy = AnchoredTailStrategy(rules, price)
    placed = [strategy.place(r) for r in requests(*convs, gap_s=600.0)]
    assert placed == [[Checkpoint(1, 300.0, "system"), Checkpoint(2)]] * 14


def test_anchored_tail_with_the_one_hour_ttl_places_every_point_at_one_hour() -> None:
    model = "anthropic.claude-sonnet-4-5-20250929-v1:0"
    strategy = AnchoredTailStrategy(cache_rules(model), price_for(model), ttl_s=3600.0)
    placed = [strategy.place(r) for r in requests(agent_conversation())]
    assert placed[-1] == [Checkpoint(1, 3600.0, "system"), Checkpoint(5, 3600.0), Checkpoint(6, 3600.0)]


def test_anchored_tail_never_beats_the_bound_and_matches_langchain_aws_on_a_tight_loop() -> None:
    rules, price = cache_rules(SONNET4), price_for(SONNET4)
    reqs = requests(agent_conversation("a"), agent_conversation("b", first=60))
    totals = {}
    for name in ("none", "langchain-aws", "anchored-tail", "last-message"):
        strategy, sim = make_strategy(name, rules, price), PromptCacheSimulator(rules, price)
        totals[name] = sum(
            sim.simulate(r.prepared.cum, r.prepared.hashes, r.n_blocks, strategy.place(r), r.time_s).cost_usd
            for r in reqs
        )
    assert totals["anchored-tail"] == pytest.approx(totals["langchain-aws"])
    assert totals["anchored-tail"] < totals["last-message"] < totals["none"]


def test_unknown_strategy_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="unknown strategy 'best'.*langchain-aws"):
        make_strategy("best", cache_rules(SONNET4))
    assert {"none", "last-message", "langchain-aws", "multi-point", "anchored-tail"} <= set(STRATEGIES)


def test_multi_point_uses_the_real_strategy() -> None:
    from promptcache.cache_points import MultiPointStrategy
    from promptcache.replay._ours import MultiPointAdapter

    strategy = make_strategy("multi-point", cache_rules(SONNET4))
    assert isinstance(strategy, MultiPointAdapter) and strategy.strategy_cls is MultiPointStrategy
    placed = [strategy.place(r) for r in requests(agent_conversation())]
    # system (1,100 tokens) reaches the minimum alone; no user segment after it does (<= 325 tokens)
    assert placed == [[Checkpoint(1, 300.0, "system")]] * 3


def test_last_message_on_nova_moves_back_from_a_tool_result() -> None:
    strategy = make_strategy("last-message", cache_rules(NOVA))
    second = requests(agent_conversation())[1]  # ends with the tool result (boundary 4); before it, the tool call
    assert strategy.place(second) == [Checkpoint(3)]


def test_strategy_name_literals_list_the_shipped_strategies():
    from typing import get_args

    from promptcache.replay._engine import DEFAULT_STRATEGIES, PLACEMENTS
    from promptcache.replay._registry import STRATEGIES, PlacementName, StrategyName

    shipped = {name for name, cls in STRATEGIES.items() if cls.__module__.startswith("promptcache.")}
    assert shipped == set(get_args(StrategyName))
    assert PLACEMENTS == get_args(PlacementName)
    assert set(DEFAULT_STRATEGIES) <= shipped
