"""Several stored intentions that mean what is asked, holding different results: the newest is served (tool results
change over time), never a miss because the outputs differ; retrieve_memory names the earlier intention it answers
and how it differs."""

from __future__ import annotations

import pytest

from promptcache.intention import IntentionMemory, make_retrieve_memory_tool
from promptcache.intention._memory_backend import InMemoryIntentionBackend


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "redis"])
def backend(request):
    if request.param == "memory":
        yield InMemoryIntentionBackend()
        return
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    url = request.getfixturevalue("redis_url")
    b = RedisIntentionBackend(url=url, prefix=request.getfixturevalue("redis_prefix"), socket_timeout_s=5.0)
    yield b
    b.close()


@pytest.fixture
def clock():
    return Clock()


def store_three(memory: IntentionMemory, clock: Clock) -> None:
    for text, temp in [
        ("What is the weather in Paris today?", "19 C"),
        ("what's the weather in Paris today please", "21 C"),
        ("Please, what is the weather in Paris today?", "23 C"),
    ]:
        memory.store("u1", text, temp, tool="get_weather", args={"city": "Paris"})
        clock.now += 60


def test_the_newest_of_equally_good_matches_is_served(backend, clock):
    memory = IntentionMemory(backend, ttl_s=3600, clock=clock)
    store_three(memory, clock)
    match = memory.retrieve("u1", "could you tell me the weather in Paris today")
    assert (match.kind, match.result, match.intention, match.age_s) == (
        "similar",
        "23 C",
        "Please, what is the weather in Paris today?",
        60.0,
    )


def test_margin_zero_serves_the_closest_and_margin_decides_what_counts_as_equally_good(backend, clock):
    store = IntentionMemory(backend, ttl_s=3600, clock=clock)
    store_three(store, clock)
    query = "what's the weather in Paris today?"
    closest = IntentionMemory(backend, ttl_s=3600, clock=clock, margin=0).retrieve("u1", query)
    assert closest.intention == "what's the weather in Paris today please"  # an extra 'please' only: the closest
    newest = IntentionMemory(backend, ttl_s=3600, clock=clock, margin=1.0).retrieve("u1", query)
    assert newest.result == "23 C"


def test_retrieve_all_returns_the_chosen_intentions_calls_labelled(backend, clock):
    memory = IntentionMemory(backend, ttl_s=3600, clock=clock)
    memory.store("u1", "flights from Paris to London tomorrow", "[AF1]", tool="search", args={"from": "CDG"})
    memory.store("u1", "flights from Paris to London tomorrow", "[BA2]", tool="search", args={"from": "ORY"})
    clock.now += 5
    text = make_retrieve_memory_tool(memory).invoke(
        {"intention": "could you find flights to London from Paris tomorrow"},
        config={"configurable": {"user_id": "u1"}},
    )
    assert text == (
        "No exact memory. It answers an earlier intention, earlier: 'flights from Paris to London tomorrow' "
        "(similarity 0.85; same meaning; wording: yours adds 'could', 'find', 'you'). Use it only if that is what is "
        "asked now; its 2 results, one per tool call:\n"
        '[1] search({"from":"CDG"}):\n[AF1]\n'
        '[2] search({"from":"ORY"}):\n[BA2]'
    )
    swapped = make_retrieve_memory_tool(memory).invoke(
        {"intention": "flights from London to Paris tomorrow"}, config={"configurable": {"user_id": "u1"}}
    )
    assert swapped == "Memory not found"


def test_one_similar_result_names_the_earlier_intention(backend, clock):
    memory = IntentionMemory(backend, ttl_s=3600, clock=clock)
    memory.store("u1", "turn off the bedroom lights", "done", tool="lights", args={"room": "bedroom", "on": False})
    clock.now += 3
    text = make_retrieve_memory_tool(memory).invoke(
        {"intention": "could you turn off the bedroom lights"}, config={"configurable": {"user_id": "u1"}}
    )
    assert text == (
        "No exact memory. It answers an earlier intention, earlier: 'turn off the bedroom lights' (similarity 0.86; "
        "same meaning; wording: yours adds 'could', 'you'). Use it only if that is what is asked now; its "
        'result from lights({"on":false,"room":"bedroom"}), 3s old:\ndone'
    )
