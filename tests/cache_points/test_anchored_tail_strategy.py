"""AnchoredTailStrategy: exact placements (Claude, Nova, tool loops, the 20-block lookback, the 4-point budget)."""

from __future__ import annotations

import pytest

from promptcache.cache_points import AnchoredTailStrategy, CachePointPlacement, CacheStrategyConfig, get_model_info
from promptcache.cache_points._anchored_tail import LOOKBACK_BLOCKS, AnchoredTailPlan
from promptcache.cache_points._converse import place_cache_points

CP = {"cachePoint": {"type": "default"}}
CLAUDE = get_model_info("anthropic.claude-sonnet-4-20250514-v1:0", min_tokens_per_cache_point=20)
NOVA = get_model_info("amazon.nova-pro-v1:0", min_tokens_per_cache_point=20)
SYSTEM = " ".join(["s"] * 25)  # 25 tokens: reaches the 20-token minimum alone


def count(message) -> int:
    """One token per word of text / tool-result text; 5 per tool call; 3 per reasoning block."""
    content = message["content"]
    if isinstance(content, str):
        return len(content.split())
    total = 0
    for block in content:
        if "text" in block:
            total += len(block["text"].split())
        elif "toolUse" in block:
            total += 5
        elif "toolResult" in block:
            total += sum(len(b["text"].split()) for b in block["toolResult"]["content"])
        elif "reasoningContent" in block:
            total += 3
    return total


def user(n: int, tag: str = "u") -> dict:
    return {"role": "user", "content": [{"text": " ".join([tag] * n)}]}


def assistant(n: int, tag: str = "a") -> dict:
    return {"role": "assistant", "content": [{"text": " ".join([tag] * n)}]}


def tool_use(i: int = 0) -> dict:
    return {"toolUse": {"toolUseId": f"t{i}", "name": "lookup", "input": {"q": i}}}


def tool_result(i: int = 0, n: int = 6) -> dict:
    return {"toolResult": {"toolUseId": f"t{i}", "content": [{"text": " ".join(["r"] * n)}]}}


def plan(info, messages, previous=None, system=SYSTEM, **kw) -> AnchoredTailPlan:
    return AnchoredTailStrategy(
        CacheStrategyConfig(info, system, messages, previous_placements=previous, count_tokens=count, **kw)
    ).plan()


def run(info, messages, previous=None, system=SYSTEM, **kw):
    return AnchoredTailStrategy(
        CacheStrategyConfig(info, system, messages, previous_placements=previous, count_tokens=count, **kw)
    ).determine_optimal_cache_points()


def test_claude_growing_conversation_anchor_tail_and_spares():
    history = [user(30), assistant(10), user(15)]
    first = run(CLAUDE, history)
    # Anchor after the system prompt; tail on the last message; the two spare slots go to the message ends before it.
    assert first.system_cache_point is True
    assert first.placements == [
        CachePointPlacement(0, "message", 30),
        CachePointPlacement(1, "message", 10),
        CachePointPlacement(2, "message", 15),
    ]
    assert [m["content"][-1] == CP for m in first.messages] == [True, True, True]
    assert first.system == [{"text": SYSTEM}, CP]
    history += [assistant(10), user(5)]
    second = run(CLAUDE, history, previous=first.placements)
    # Previous tail 2 is 2 blocks back (within the lookback): no bridge; one spare after it (3); nothing before it.
    assert second.system_cache_point is True
    assert [(p.index, p.tokens_covered) for p in second.placements] == [(3, 55 + 10), (4, 5)]
    assert plan(CLAUDE, history, previous=first.placements) == AnchoredTailPlan(True, 4, 2, None, (3,))
    # Same request again (nothing new): the point stays on the tail, read-only; no spares.
    assert plan(CLAUDE, history, previous=second.placements) == AnchoredTailPlan(True, 4, 4, None, ())


def test_claude_tool_loop_tail_after_tool_result_and_not_after_reasoning():
    reasoning = {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "s"}}}
    history = [
        user(30),
        {"role": "assistant", "content": [{"text": "let me look"}, tool_use()]},
        {"role": "user", "content": [tool_result()]},
    ]
    # Claude accepts a point after the tool-result message (a sibling block, never inside toolResult).
    assert plan(CLAUDE, history) == AnchoredTailPlan(True, 2, None, None, (1, 0))
    history += [
        {"role": "assistant", "content": [tool_use(1), reasoning]},
        {"role": "user", "content": [tool_result(1)]},
    ]
    # The assistant message ending in a reasoning block gets no spare point.
    assert plan(CLAUDE, history, previous=[CachePointPlacement(2)]) == AnchoredTailPlan(True, 4, 2, None, ())
    result = run(CLAUDE, history, previous=[CachePointPlacement(2)])
    assert result.messages[3]["content"] == [tool_use(1), reasoning]
    assert result.messages[4]["content"] == [tool_result(1), CP]


def test_nova_tail_moves_back_before_tool_results():
    history = [user(30), {"role": "assistant", "content": [tool_use()]}, {"role": "user", "content": [tool_result()]}]
    # Nova forbids a point after a toolResult: the tail goes after the assistant's toolUse (index 1).
    first = run(NOVA, history)
    assert first.system_cache_point is True
    assert [p.index for p in first.placements] == [0, 1]
    assert first.messages[2]["content"] == [tool_result()]
    history += [{"role": "assistant", "content": [tool_use(1)]}, {"role": "user", "content": [tool_result(1)]}]
    assert plan(NOVA, history, previous=first.placements) == AnchoredTailPlan(True, 3, 1, None, ())
    history += [assistant(5), user(8)]
    assert plan(NOVA, history, previous=[CachePointPlacement(3)]) == AnchoredTailPlan(True, 6, 3, None, (5,))
    # A tools point never goes on Nova, even with no system prompt and huge specs.
    spec = {"toolSpec": {"name": "f", "description": " ".join(["w"] * 200), "inputSchema": {"json": {}}}}
    converse = place_cache_points(NOVA, [], history[:3], [spec], count_tokens=count, strategy=AnchoredTailStrategy)
    assert converse.tools == [spec] and not converse.tools_point


def test_bridge_when_the_new_tail_is_more_than_twenty_blocks_after_the_previous_one():
    def parallel(k):
        return [
            {"role": "assistant", "content": [tool_use(i) for i in range(k)]},
            {"role": "user", "content": [tool_result(i, 1) for i in range(k)]},
        ]

    base = [user(30)]
    assert LOOKBACK_BLOCKS == 20
    # 11 tool calls + 11 results = 22 blocks after the previous tail (index 0): a bridge keeps index 0 findable.
    assert plan(CLAUDE, base + parallel(11), previous=[CachePointPlacement(0)]) == AnchoredTailPlan(True, 2, 0, 0, (1,))
    assert [p.index for p in run(CLAUDE, base + parallel(11), previous=[CachePointPlacement(0)]).placements] == [
        0,
        1,
        2,
    ]
    # Exactly 20 blocks: within the lookback, no bridge.
    assert plan(CLAUDE, base + parallel(10), previous=[CachePointPlacement(0)]) == AnchoredTailPlan(
        True, 2, 0, None, (1,)
    )


def test_budget_with_manual_points_priority_tail_bridge_anchor():
    calls = [{"role": "assistant", "content": [tool_use(i) for i in range(11)]}]
    results = [tool_result(i, 1) for i in range(11)]
    previous = [CachePointPlacement(0)]
    system = [{"text": SYSTEM}]

    def points(messages):
        converse = place_cache_points(
            CLAUDE, system, messages, previous_placements=previous, count_tokens=count, strategy=AnchoredTailStrategy
        )
        total = sum(b == CP for m in converse.messages for b in m["content"]) + converse.system.count(CP)
        return converse.system_point, [p.index for p in converse.placements], total

    def with_manual(k):  # k manual points among the 11 tool results (22 blocks after the previous tail)
        content = list(results)
        for n in range(k):
            content.insert(2 + 3 * n, CP)
        return [user(30), *calls, {"role": "user", "content": content}]

    # No manual point: tail + bridge + anchor + one spare.
    assert points(with_manual(0)) == (True, [0, 1, 2], 4)
    # 1 manual point: 3 left = tail + bridge + anchor, no spare.
    assert points(with_manual(1)) == (True, [0, 2], 4)
    # 2 manual points: tail + bridge; no anchor.
    assert points(with_manual(2)) == (False, [0, 2], 4)
    # 3 manual points: the tail only.
    assert points(with_manual(3)) == (False, [2], 4)
    # 4 manual points: nothing added.
    assert (
        place_cache_points(
            CLAUDE, system, with_manual(4), count_tokens=count, strategy=AnchoredTailStrategy
        ).points_added
        == 0
    )
    # A manual point on the previous tail itself serves as the bridge without spending a slot.
    own = [{"role": "user", "content": [*user(30)["content"], CP]}, *calls, {"role": "user", "content": results}]
    assert points(own) == (True, [0, 1, 2], 4)


def test_anchor_needs_the_whole_prefix_to_reach_the_minimum():
    short_system = "s s s s s"  # 5 tokens alone
    spec = {"toolSpec": {"name": "f", "description": " ".join(["w"] * 40), "inputSchema": {"json": {}}}}
    messages = [user(3)]
    # Without tools the 5-token system gets no anchor; the tail is placed anyway (it caches nothing yet, costs no
    # slot that could cache: every other point would close a shorter prefix).
    assert plan(CLAUDE, messages, system=short_system) == AnchoredTailPlan(False, 0, None, None, ())
    # The tool specs in front count (prefix_tokens): the system point now closes a prefix over the minimum.
    converse = place_cache_points(
        CLAUDE, [{"text": short_system}], messages, [spec], count_tokens=count, strategy=AnchoredTailStrategy
    )
    assert (converse.tools_point, converse.system_point, [p.index for p in converse.placements]) == (False, True, [0])
    # No system prompt: the anchor goes on the tools.
    converse = place_cache_points(CLAUDE, [], messages, [spec], count_tokens=count, strategy=AnchoredTailStrategy)
    assert converse.tools == [spec, CP] and converse.system == [] and [p.index for p in converse.placements] == [0]
    # Empty history, caching off, one slot.
    assert plan(CLAUDE, []) == AnchoredTailPlan()
    assert plan(CLAUDE, [user(30)], use_prompt_cache=False) == AnchoredTailPlan()
    assert plan(CLAUDE, [user(30), assistant(5), user(5)], max_points=1) == AnchoredTailPlan(False, 2, None, None, ())


def test_previous_tail_rebased_after_truncation_or_forgotten():
    history = [user(30, "x"), assistant(10, "y"), user(15, "z"), assistant(10, "v"), user(5, "w")]
    first = run(CLAUDE, history[:3])
    assert [p.index for p in first.placements] == [0, 1, 2]
    # The first two messages were summarised away: the tail's message (z) is now at index 0.
    cut = history[2:]
    assert plan(CLAUDE, cut, previous=first.placements) == AnchoredTailPlan(True, 2, 0, None, (1,))
    # Its message is gone altogether: no previous tail; spares fill back to the start.
    assert plan(CLAUDE, history[3:], previous=first.placements) == AnchoredTailPlan(True, 1, None, None, (0,))


def test_bad_prefix_tokens_and_strategy_rejected():
    with pytest.raises(ValueError, match="prefix_tokens must be an int >= 0, got -1"):
        CacheStrategyConfig(CLAUDE, None, [user(3)], prefix_tokens=-1)
    with pytest.raises(TypeError, match="strategy must be a CacheStrategy subclass, got 'anchored-tail'"):
        place_cache_points(CLAUDE, [], [user(3)], strategy="anchored-tail")


@pytest.mark.parametrize("model_id", ["anthropic.claude-sonnet-4-20250514-v1:0", "amazon.nova-pro-v1:0"])
def test_replay_and_wrapper_place_the_same_boundaries(model_id):
    """The replay's ``anchored-tail`` and the wrapper's placement, on the same agent conversation (a tool loop with
    12 parallel calls, past the lookback): the same points, request by request."""
    from promptcache._pricing import price_for
    from promptcache.replay._models import cache_rules
    from promptcache.replay._ours import AnchoredTailStrategy as ReplayAnchoredTail
    from promptcache.replay._prepare import prepare, requests_of, schedule
    from promptcache.replay._tokens import TokenCounter
    from promptcache.replay._transcript import Block, Conversation, Message

    system = " alpha" * 1100
    calls = [Block("tool_use", f'{{"q":{i}}}', "lookup", f"t{i}") for i in range(12)]
    conv = Conversation(
        "c",
        "c",
        (Block("text", system),),
        [
            Message("user", (Block("text", " alpha" * 40),)),
            Message("assistant", (calls[0],)),
            Message("tool", (Block("tool_result", " alpha" * 200, id="t0"),)),
            Message("assistant", (Block("text", " alpha" * 30),)),
            Message("user", (Block("text", " alpha" * 40),)),
            Message("assistant", tuple(calls)),
            *[Message("tool", (Block("tool_result", " ok", id=f"t{i}"),)) for i in range(12)],
            Message("assistant", (Block("text", " done"),)),
        ],
    )
    counter = TokenCounter()
    requests = schedule([requests_of(prepare(conv, counter), counter)], 10.0)
    replay = ReplayAnchoredTail(cache_rules(model_id), price_for(model_id))

    def converse(message):
        block = message.blocks[0]
        if block.kind == "tool_use":
            return [{"toolUse": {"toolUseId": b.id, "name": b.name, "input": {}}} for b in message.blocks]
        if block.kind == "tool_result":
            return [{"toolResult": {"toolUseId": block.id, "content": [{"text": block.text}]}}]
        return [{"text": block.text}]

    info, previous, seen = get_model_info(model_id), None, []
    for request in requests:
        messages = []
        for message in conv.messages[: request.cut]:
            role = "assistant" if message.role == "assistant" else "user"
            if messages and messages[-1]["role"] == role:
                messages[-1]["content"] += converse(message)
            else:
                messages.append({"role": role, "content": converse(message)})
        plan = place_cache_points(
            info, [{"text": system}], messages, previous_placements=previous, strategy=AnchoredTailStrategy
        )
        previous = plan.placements
        wrapper = ([request.prepared.system_end] if plan.system_point else []) + [
            request.groups[p.index].end for p in plan.placements
        ]
        assert [p.boundary for p in replay.place(request)] == wrapper
        seen.append(wrapper)
    # Block boundaries (system = 1 block). Claude: the last tail (30, after the 12 results) is 24 blocks past the
    # previous one (6), so 6 stays as a bridge, 18 is the spare. Nova: tails move back after the toolUse (3, 18).
    assert (
        seen
        == (
            {
                "anthropic.claude-sonnet-4-20250514-v1:0": [[1, 2], [1, 3, 4], [1, 5, 6], [1, 6, 18, 30]],
                "amazon.nova-pro-v1:0": [[1, 2], [1, 3], [1, 5, 6], [1, 18]],
            }[model_id]
        )
    )
