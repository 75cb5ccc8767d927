"""The replay's intention-cache figures: real IntentionMemory lookups and IntentionCache stores, call by call."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from promptcache.intention import IntentionMemory
from promptcache.replay._intentions import IntentionReplay, IntentionStats, agent_messages
from promptcache.replay._prepare import prepare, requests_of, schedule
from promptcache.replay._tokens import TokenCounter
from promptcache.replay._transcript import Block, Conversation, Message


def user(text: str) -> Message:
    return Message("user", (Block("text", text),))


def call(name: str, args: str, cid: str) -> Message:
    return Message("assistant", (Block("tool_use", args, name, cid),))


def result(text: str, cid: str, error: bool = False) -> Message:
    return Message("tool", (Block("tool_result", text, id=cid, is_error=error),))


def reply(text: str = "done") -> Message:
    return Message("assistant", (Block("text", text),))


def conv(cid: str, family: str, *messages: Message) -> Conversation:
    return Conversation(cid, family, (Block("text", "sys"),), list(messages))


def replay(convs: list[Conversation], gap_s: float = 10.0, memory: IntentionMemory | None = None) -> IntentionStats:
    counter = TokenCounter()
    intentions = IntentionReplay(memory)
    for request in schedule([requests_of(prepare(c, counter), counter) for c in convs], gap_s):
        intentions.feed(request)
    return intentions.stats


def lookup(
    cid: str,
    family: str,
    question: str,
    name: str = "get_order",
    args: str = '{"order_id":"A1"}',
    text: str = '{"status":"shipped"}',
) -> Conversation:
    return conv(cid, family, user(question), call(name, args, f"{cid}-1"), result(text, f"{cid}-1"), reply())


def counts(stats: IntentionStats) -> tuple[int, ...]:
    return (stats.tool_calls, stats.exact, stats.similar, stats.wrong_exact, stats.wrong_similar, stats.stored)


def served(stats: IntentionStats) -> tuple[int, int, int]:
    return stats.served, stats.served_stale, stats.right_stale


def test_same_question_same_call_is_a_right_exact_answer_for_the_same_user_only() -> None:
    stats = replay(
        [
            lookup("a", "user:u1", "Where is order A1?"),
            lookup("b", "user:u1", "where is order A1"),  # normalises to the same intention
            lookup("c", "user:u2", "Where is order A1?"),
        ]
    )  # another user: own memories
    # b repeats a's call under the same (normalised) intention: serve_repeats answers it, so it is not stored again
    assert counts(stats) == (3, 1, 0, 0, 0, 2)
    assert (stats.answered, stats.wrong, stats.right, stats.users, stats.same_call_repeats) == (1, 0, 1, 2, 1)
    assert (served(stats), stats.listed_results) == ((1, 0, 0), 1)


def test_a_similar_question_is_a_similar_answer() -> None:
    stats = replay(
        [
            lookup("a", "user:u1", "What is the status of my order A1?"),
            lookup("b", "user:u1", "what is the status of my order A1 please"),
        ]
    )
    assert counts(stats) == (2, 0, 1, 0, 0, 2)


def test_two_calls_for_one_human_message_the_second_finds_only_the_first_calls_result() -> None:
    # Both calls are filed under the same human message: the second lookup lists only the first call's result.
    c = conv(
        "a",
        "user:u1",
        user("I am cust_1, where is order A1?"),
        call("get_customer", '{"customer_id":"cust_1"}', "t1"),
        result('{"name":"Ana"}', "t1"),
        call("get_order", '{"order_id":"A1"}', "t2"),
        result('{"status":"shipped"}', "t2"),
        reply(),
    )
    stats = replay([c])
    assert counts(stats) == (2, 1, 0, 1, 0, 2)
    assert (stats.right, stats.same_call_repeats) == (0, 0)


def test_an_intention_holds_every_call_a_repeat_finds_its_own_among_them() -> None:
    # The same question again (same user, later): the answer lists both calls; each call's own result is there.
    # The repeated calls are served from memory; the order changed in between, so that one is stale.
    def ask(cid: str, status: str) -> Conversation:
        return conv(
            cid,
            "user:u1",
            user("I am cust_1, where is order A1?"),
            call("get_customer", '{"customer_id":"cust_1"}', f"{cid}1"),
            result('{"name":"Ana"}', f"{cid}1"),
            call("get_order", '{"order_id":"A1"}', f"{cid}2"),
            result(status, f"{cid}2"),
            reply(),
        )

    stats = replay([ask("a", "shipped"), ask("b", "delivered")])
    assert counts(stats) == (4, 3, 0, 1, 0, 2)  # a: 1 wrong (above); b: 2 right, both calls served, not re-stored
    assert (stats.right, stats.listed_results, stats.same_call_repeats, stats.same_call_repeats_changed) == (2, 5, 2, 1)
    assert served(stats) == (2, 1, 1)  # get_order's stored "shipped" differs from the recorded "delivered"


def test_errors_and_side_effecting_tools_are_not_stored_nor_served_and_answering_them_is_wrong() -> None:
    convs = [
        lookup("a", "user:u1", "Where is order A1?", text="Error: order service down"),  # not stored (error text)
        lookup("b", "user:u1", "Where is order A1?"),  # so this one is not answered
        lookup("c", "user:u1", "Cancel order A1", name="update_order", args='{"order_id":"A1","status":"x"}'),
        lookup("d", "user:u1", "Cancel order A1", name="update_order", args='{"order_id":"A1","status":"x"}'),
        lookup("e", "user:u1", "Where is order A1?", name="delete_order"),  # b's result answers: wrong
    ]
    stats = replay(convs)
    assert counts(stats) == (5, 1, 0, 1, 0, 1)  # only b stored; update_/delete_ are on the deny list
    assert stats.same_call_repeats == 0  # a failed, d repeats c but update_ calls are never answerable
    assert served(stats) == (0, 0, 0)
    booked = replay(
        [
            lookup("a", "user:u1", "Book it", name="book_reservation", args='{"f":"HAT1"}', text="ok"),
            lookup("b", "user:u1", "Book it", name="book_reservation", args='{"f":"HAT1"}', text="ok"),
        ]
    )
    assert (counts(booked), served(booked)) == ((2, 0, 0, 0, 0, 0), (0, 0, 0))  # book_ is on the deny list
    flagged = replay(
        [
            conv(
                "a",
                "user:u1",
                user("Where is A1?"),
                call("get_order", "{}", "t"),
                result("not found", "t", error=True),
                reply(),
            ),
            conv("b", "user:u1", user("Where is A1?"), call("get_order", "{}", "t"), result("ok", "t"), reply()),
        ]
    )
    assert counts(flagged) == (2, 0, 0, 0, 0, 1)


def test_memories_expire_on_the_replay_clock() -> None:
    convs = [lookup("a", "user:u1", "Where is order A1?"), lookup("b", "user:u1", "Where is order A1?")]
    assert replay(convs, gap_s=10.0, memory=IntentionMemory(ttl_s=100)).exact == 1  # b looks up 20 s later
    assert replay(convs, gap_s=60.0, memory=IntentionMemory(ttl_s=100)).exact == 0  # 120 s later: expired


def test_the_intention_argument_wins_over_the_human_message() -> None:
    convs = [
        lookup("a", "user:u1", "hello", args='{"intention":"order A1 status","order_id":"A1"}'),
        lookup("b", "user:u1", "something else", args='{"intention":"order A1 status","order_id":"A1"}'),
    ]
    stats = replay(convs)
    assert counts(stats) == (2, 1, 0, 0, 0, 1)  # b is served from memory (same intention, tool and arguments)
    assert served(stats) == (1, 0, 0)


def test_calls_of_one_message_are_looked_up_before_any_is_stored() -> None:
    both = Message(
        "assistant",
        (
            Block("tool_use", '{"order_id":"A1"}', "get_order", "t1"),
            Block("tool_use", '{"order_id":"A1"}', "get_tracking", "t2"),
        ),
    )
    results = Message("tool", (Block("tool_result", "shipped", id="t1"),))
    tracking = Message("tool", (Block("tool_result", "UPS", id="t2"),))
    stats = replay([conv("a", "user:u1", user("Where is order A1?"), both, results, tracking, reply())])
    assert counts(stats) == (2, 0, 0, 0, 0, 2)


def test_anthropic_tool_results_become_tool_messages_not_the_human_message() -> None:
    c = conv(
        "a",
        "user:u1",
        user("Where is order A1?"),
        Message("assistant", (Block("tool_use", '{"order_id":"A1"}', "get_order", "t1"),)),
        Message("user", (Block("tool_result", "shipped", id="t1"),)),
        Message("assistant", (Block("tool_use", '{"order_id":"A1"}', "get_tracking", "t2"),)),
        Message("user", (Block("tool_result", "UPS", id="t2"), Block("text", "thanks"))),
        reply(),
    )
    messages, ends = agent_messages(c)
    assert [type(m) for m in messages] == [
        SystemMessage,
        HumanMessage,
        AIMessage,
        ToolMessage,
        AIMessage,
        ToolMessage,
        HumanMessage,
        AIMessage,
    ]
    assert ends == [2, 3, 4, 5, 7, 8]
    assert messages[2].tool_calls == [
        {"name": "get_order", "args": {"order_id": "A1"}, "id": "t1", "type": "tool_call"}
    ]
    # the second call is still filed under "Where is order A1?": an exact, wrong answer (get_order's result)
    assert counts(replay([c])) == (2, 1, 0, 1, 0, 2)
