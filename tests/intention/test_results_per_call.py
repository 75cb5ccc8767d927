"""Several results per intention (one per tool call): retrieve's tool/args filter, retrieve_all, and the
retrieve_memory text that lists them, on both backends (in-memory and real Redis)."""

from __future__ import annotations

import pytest

from promptcache.intention import InMemoryIntentionBackend, IntentionMemory, make_retrieve_memory_tool
from promptcache.intention._tool import MEMORY_NOT_FOUND, format_matches


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "redis", "redis-cluster"])
def backend(request):
    if request.param == "memory":
        yield InMemoryIntentionBackend()
        return
    if request.param == "redis-cluster":
        yield request.getfixturevalue("redis_cluster_intention")
        return
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    b = RedisIntentionBackend(url=request.getfixturevalue("redis_url"), prefix=request.getfixturevalue("redis_prefix"))
    yield b
    b.close()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def memory(backend, clock):
    return IntentionMemory(backend, ttl_s=600, clock=clock)


ASK = "My user id is omar_3817, what are my reservations?"


def store_three(memory: IntentionMemory, clock: Clock) -> None:
    """What a tau-bench agent does for one user message: three tool calls, 10 s apart."""
    memory.store("u1", ASK, '{"reservations":["JG7","LQ9"]}', tool="get_user_details", args={"user_id": "omar_3817"})
    clock.now += 10
    memory.store("u1", ASK, '{"id":"JG7","to":"JFK"}', tool="get_reservation_details", args={"reservation_id": "JG7"})
    clock.now += 10
    memory.store("u1", ASK, '{"id":"LQ9","to":"SFO"}', tool="get_reservation_details", args={"reservation_id": "LQ9"})


def calls(matches) -> list[tuple]:
    return [(m.kind, m.tool, m.args, m.result, m.age_s) for m in matches]


def test_retrieve_all_returns_every_call_of_the_intention_most_recent_first(memory, clock):
    store_three(memory, clock)
    assert calls(memory.retrieve_all("u1", "my user id is omar_3817 what are my reservations")) == [
        ("exact", "get_reservation_details", {"reservation_id": "LQ9"}, '{"id":"LQ9","to":"SFO"}', 0.0),
        ("exact", "get_reservation_details", {"reservation_id": "JG7"}, '{"id":"JG7","to":"JFK"}', 10.0),
        ("exact", "get_user_details", {"user_id": "omar_3817"}, '{"reservations":["JG7","LQ9"]}', 20.0),
    ]
    assert memory.retrieve_all("u2", ASK) == []
    assert memory.retrieve_all("u1", "What is the weather in Paris?") == []


def test_retrieve_filters_by_tool_and_args(memory, clock):
    store_three(memory, clock)
    assert memory.retrieve("u1", ASK).args == {"reservation_id": "LQ9"}  # no filter: the most recent
    assert memory.retrieve("u1", ASK, tool="get_user_details").result == '{"reservations":["JG7","LQ9"]}'
    jg7 = memory.retrieve("u1", ASK, tool="get_reservation_details", args={"reservation_id": "JG7"})
    assert (jg7.kind, jg7.result) == ("exact", '{"id":"JG7","to":"JFK"}')
    assert memory.retrieve("u1", ASK, args={"reservation_id": "JG7"}).tool == "get_reservation_details"
    assert memory.retrieve("u1", ASK, tool="get_reservation_details", args={"reservation_id": "XX"}) is None
    assert memory.retrieve("u1", ASK, tool="search_flights") is None
    assert [m.args for m in memory.retrieve_all("u1", ASK, tool="get_reservation_details")] == [
        {"reservation_id": "LQ9"},
        {"reservation_id": "JG7"},
    ]


def test_args_filter_ignores_key_order(memory):
    memory.store("u1", "flights to JFK", "[...]", tool="search", args={"origin": "SFO", "dest": "JFK", "n": 2})
    hit = memory.retrieve("u1", "flights to JFK", tool="search", args={"n": 2, "dest": "JFK", "origin": "SFO"})
    assert hit is not None and hit.result == "[...]"


def test_similar_match_returns_the_whole_group_and_is_not_ambiguous_within_it(memory, clock):
    # Before, the three results of one intention competed with each other in the margin rule (a miss).
    store_three(memory, clock)
    query = "my user id is omar_3817, what are my reservations please"
    found = memory.retrieve_all("u1", query)
    assert [(m.kind, m.tool, m.args["reservation_id"] if "reservation_id" in m.args else None) for m in found] == [
        ("similar", "get_reservation_details", "LQ9"),
        ("similar", "get_reservation_details", "JG7"),
        ("similar", "get_user_details", None),
    ]
    assert len({m.similarity for m in found}) == 1 and 0.7 <= found[0].similarity < 1.0
    assert memory.retrieve("u1", query).args == {"reservation_id": "LQ9"}
    assert memory.retrieve("u1", query, exact_only=True) is None
    assert memory.retrieve_all("u1", query, exact_only=True) == []


def test_two_equivalent_intentions_with_different_results_serve_the_newest(memory, clock):
    # Before, two intentions with different results nearly as close were "ambiguous" (a miss); both mean what is
    # asked, and a tool result changes over time: the newest one is served.
    memory.store("u1", "What is the weather in Paris today?", "21 C", tool="weather", args={"city": "Paris"})
    clock.now += 1
    memory.store(
        "u1", "What is the weather in Paris today please?", "22 C", tool="weather", args={"city": "Paris", "unit": "C"}
    )
    found = memory.retrieve_all("u1", "what's the weather in Paris today")
    assert [(m.kind, m.result, m.intention) for m in found] == [
        ("similar", "22 C", "What is the weather in Paris today please?")
    ]


async def test_async_twins(memory, clock):
    store_three(memory, clock)
    found = await memory.aretrieve_all("u1", ASK)
    assert [m.args for m in found] == [{"reservation_id": "LQ9"}, {"reservation_id": "JG7"}, {"user_id": "omar_3817"}]
    one = await memory.aretrieve("u1", ASK, tool="get_reservation_details", args={"reservation_id": "JG7"})
    assert one.result == '{"id":"JG7","to":"JFK"}'
    assert await memory.aretrieve("u1", ASK, tool="nope") is None
    assert (
        await memory.aretrieve_all(
            "u1", "my user id is omar_3817, what are all my reservations please", exact_only=True
        )
        == []
    )


def test_retrieve_all_fails_open_on_a_dead_backend():
    from promptcache.integrations._redis_intention import RedisIntentionBackend
    from promptcache.intention._backends import IntentionBackendError

    dead = IntentionMemory(RedisIntentionBackend(url="redis://127.0.0.1:1/0", socket_timeout_s=0.05), ttl_s=60)
    assert dead.retrieve_all("u1", ASK) == []
    with pytest.raises(IntentionBackendError):
        dead.retrieve_all("u1", ASK, fail_open=False)


def test_retrieve_memory_tool_lists_every_result_labelled_in_a_stable_order(memory, clock):
    store_three(memory, clock)
    t = make_retrieve_memory_tool(memory)
    text = t.invoke({"intention": ASK}, config={"configurable": {"user_id": "u1"}})
    assert text == (
        "3 results stored for this intention, one per tool call:\n"
        '[1] get_reservation_details({"reservation_id":"JG7"}):\n{"id":"JG7","to":"JFK"}\n'
        '[2] get_reservation_details({"reservation_id":"LQ9"}):\n{"id":"LQ9","to":"SFO"}\n'
        '[3] get_user_details({"user_id":"omar_3817"}):\n{"reservations":["JG7","LQ9"]}'
    )
    # storing one of them again (newer) does not change the text
    memory.store("u1", ASK, '{"reservations":["JG7","LQ9"]}', tool="get_user_details", args={"user_id": "omar_3817"})
    assert t.invoke({"intention": ASK}, config={"configurable": {"user_id": "u1"}}) == text
    similar = t.invoke(
        {"intention": "my user id is omar_3817, what are my reservations please"},
        config={"configurable": {"user_id": "u1"}},
    )
    assert similar.splitlines()[0] == (
        f"No exact memory. It answers an earlier intention, earlier: {ASK!r} (similarity 0.93; same meaning; "
        "wording: yours adds 'please'). Use it only if that is what is asked now; its 3 results, one per tool call:"
    )
    capped = make_retrieve_memory_tool(memory, max_results=2).invoke(
        {"intention": ASK}, config={"configurable": {"user_id": "u1"}}
    )
    assert capped.splitlines()[0] == "3 results stored for this intention, one per tool call (1 older left out):"
    assert [line[:4] for line in capped.splitlines()[1::2]] == ["[1] ", "[2] "]
    assert 'JG7","to"' not in capped  # the oldest (JG7's details) is the one left out


def test_one_result_is_labelled_a_bare_one_is_as_is_and_none_is_not_found(memory):
    assert format_matches([]) == MEMORY_NOT_FOUND
    memory.store("u1", ASK, {"reservations": ["JG7"]}, tool="get_user_details", args={"user_id": "omar_3817"})
    assert make_retrieve_memory_tool(memory, scope="u1").invoke({"intention": ASK}) == (
        '1 result stored for this intention:\n[1] get_user_details({"user_id":"omar_3817"}):\n{"reservations":["JG7"]}'
    )
    memory.store("u1", "what is my name", "Ana")
    assert make_retrieve_memory_tool(memory, scope="u1").invoke({"intention": "What is my name?"}) == "Ana"
    with pytest.raises(ValueError, match="max_results"):
        make_retrieve_memory_tool(memory, max_results=0)
