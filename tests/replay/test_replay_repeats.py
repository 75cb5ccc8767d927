"""ResponseCache hits (real key, TTL) and intention-cache answers counted by the replay."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from promptcache.replay._prepare import prepare, requests_of, schedule
from promptcache.replay._repeats import RepeatCounter, lc_messages, response_cache_key
from promptcache.replay._tokens import TokenCounter
from promptcache.replay._transcript import Block, Conversation, Message
from promptcache.response_cache import ResponseCacheKeyInputs, build_response_cache_key

MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"


def conv(cid: str, family: str, first: str, lookup: str = '{"id":1}', result: str = "ok") -> Conversation:
    return Conversation(
        cid,
        family,
        (Block("text", "sys"),),
        [
            Message("user", (Block("text", first),)),
            Message("assistant", (Block("tool_use", lookup, "get", f"{cid}-t"),)),
            Message("tool", (Block("tool_result", result, id=f"{cid}-t"),)),
            Message("assistant", (Block("text", "done"),)),
        ],
    )


def feed(convs: list[Conversation], gap_s: float, ttl_s: float | None = None) -> RepeatCounter:
    counter = TokenCounter()
    repeats = RepeatCounter(MODEL, ttl_s)
    for request in schedule([requests_of(prepare(c, counter), counter) for c in convs], gap_s):
        repeats.feed(request)
    return repeats


def test_key_is_the_real_response_cache_key() -> None:
    prompt = [
        SystemMessage("sys"),
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "get", "args": {"id": 1}, "id": "x", "type": "tool_call"}]),
    ]
    expected = build_response_cache_key(
        ResponseCacheKeyInputs(
            agent_id="promptcache-response-cache",
            scope="u1",
            model={"provider": "amazon_bedrock_converse", "model_id": MODEL, "llm_string": f"replay:{MODEL}"},
            prompt=prompt,
            step_number=1,
        )
    )
    assert response_cache_key(prompt, MODEL, scope="u1") == expected
    assert expected.startswith("response:promptcache-response-cache:")


def test_lc_messages_rebuild_tool_calls_and_results() -> None:
    msgs = lc_messages(conv("a", "user:u1", "hi"))
    assert [m.type for m in msgs] == ["system", "human", "ai", "tool", "ai"]
    assert msgs[2].tool_calls == [{"name": "get", "args": {"id": 1}, "id": "a-t", "type": "tool_call"}]
    assert msgs[3].tool_call_id == "a-t"


def test_exact_repeats_hit_within_the_ttl_only_and_per_user() -> None:
    # a and b: same user, same messages -> both of b's requests repeat a's (the key ignores tool-call ids, which
    # differ). c: another user, same text: another scope, no hit.
    convs = [conv("a", "user:u1", "hi"), conv("b", "user:u1", "hi"), conv("c", "user:u2", "hi")]
    near = feed(convs, gap_s=10.0)  # b's requests come 20 s after a's
    assert (near.response.hits, near.response.repeats) == (2, 2)
    far = feed(convs, gap_s=200.0)  # 400 s later: expired (TTL 300 s), still repeats
    assert (far.response.hits, far.response.repeats) == (0, 2)
    longer = feed(convs, gap_s=200.0, ttl_s=401.0)  # a TTL longer than the distance: both hit again
    assert (longer.response.hits, longer.response.repeats, longer.response.ttl_s) == (2, 2, 401.0)


def test_the_counter_reports_the_intention_replay() -> None:
    # the figures themselves are pinned in test_replay_intentions.py; here: the counter feeds every request
    convs = [conv("a", "user:u1", "where is order 1"), conv("b", "user:u1", "where is order 1")]
    stats = feed(convs, gap_s=10.0).intention
    # b repeats a's call under the same intention: served from memory (serve_repeats), so stored once
    assert (stats.tool_calls, stats.exact, stats.wrong, stats.stored, stats.served, stats.users) == (2, 1, 0, 1, 1, 1)
