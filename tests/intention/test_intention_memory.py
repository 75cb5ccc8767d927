"""IntentionMemory on both backends (in-memory and real Redis): matching, expiry, dedupe, bad input, failures."""

from __future__ import annotations

import math

import pytest

from promptcache.intention import (
    InMemoryIntentionBackend,
    IntentionMatch,
    IntentionMemory,
    LexicalSimilarity,
)


class Clock:
    """A settable clock (epoch seconds) so expiry is tested without sleeping."""

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

    url, prefix = request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
    b = RedisIntentionBackend(url=url, prefix=prefix)
    yield b
    b.close()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def memory(backend, clock):
    return IntentionMemory(backend, ttl_s=600, clock=clock)


def index_size(backend, user: str) -> int:
    if isinstance(backend, InMemoryIntentionBackend):
        return backend.index_size(user)
    return backend.client.zcard(backend.index_key(user))


WEATHER = "What is the weather in Paris today?"


def test_exact_hit_normalises_case_whitespace_and_punctuation(memory, clock):
    assert memory.store("u1", WEATHER, {"temp_c": 21}, tool="get_weather", args={"city": "Paris"}) is True
    clock.now += 30
    match = memory.retrieve("u1", "  what is the WEATHER in paris today  ")
    assert match == IntentionMatch(
        kind="exact",
        intention=WEATHER,
        similarity=1.0,
        tool="get_weather",
        args={"city": "Paris"},
        age_s=30.0,
        result={"temp_c": 21},
        memory_id=match.memory_id,
        result_hash=match.result_hash,
        verified_by="exact",
    )
    assert len(match.memory_id) == 32 and len(match.result_hash) == 64


def test_paraphrase_hit_above_threshold(memory):
    memory.store("u1", WEATHER, "21 C, sunny", tool="get_weather", args={"city": "Paris"})
    match = memory.retrieve("u1", "What's the weather like in Paris today?")
    assert match is not None
    assert (match.kind, match.intention, match.result) == ("similar", WEATHER, "21 C, sunny")
    assert match.similarity == pytest.approx(0.813733, abs=1e-6)
    assert match.similarity >= memory.threshold


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        ("What is the weather in Paris today?", "What is the weather in London today?"),
        ("Show me page 1 of the quarterly report", "Show me page 2 of the quarterly report"),
        ("Show me the open tickets for SOMEAPP", "Show me the open tickets for SOMEAPP2"),
        ("Show me the open tickets for SOMEAPP2", "Show me the open tickets for SOMEAPP"),
        ("List the three largest invoices", "List the four largest invoices"),
    ],
)
def test_entity_and_number_mismatch_is_a_miss(memory, stored, query):
    memory.store("u1", stored, "result")
    # Lexically these are close (at or above the threshold): only the anchor rule turns them away.
    assert LexicalSimilarity().scores(query, [stored])[0] >= 0.6
    assert memory.retrieve("u1", query) is None
    assert memory.retrieve("u1", stored).kind == "exact"


def test_entity_capitalised_on_one_side_only_still_agrees(memory):
    memory.store("u1", "Weather forecast for Paris today", "sunny")
    match = memory.retrieve("u1", "what's the weather forecast for paris today?")
    assert match is not None and match.result == "sunny" and match.kind == "similar"


def test_another_users_memory_is_never_returned(memory):
    memory.store("alice", WEATHER, "alice's result")
    assert memory.retrieve("bob", WEATHER) is None
    assert memory.retrieve("bob", "What's the weather like in Paris today?") is None
    assert memory.retrieve("alice", WEATHER).result == "alice's result"


def test_expired_memories_are_never_returned_and_pruned(memory, backend, clock):
    memory.store("u1", WEATHER, "old")
    clock.now += 300
    memory.store("u1", "How many open tickets do I have?", 7)
    assert index_size(backend, "u1") == 2
    clock.now += 301  # the first memory is 601 s old (ttl 600), the second 301 s
    assert memory.retrieve("u1", WEATHER) is None
    assert index_size(backend, "u1") == 1
    assert memory.retrieve("u1", "how many open tickets do I have").result == 7
    clock.now += 300
    assert memory.retrieve("u1", "how many open tickets do I have") is None
    assert index_size(backend, "u1") == 0


def test_same_intention_tool_and_args_replaces(memory, backend, clock):
    memory.store("u1", WEATHER, "first", tool="get_weather", args={"city": "Paris"})
    clock.now += 5
    memory.store("u1", "what is the weather in Paris today", "second", tool="get_weather", args={"city": "Paris"})
    assert index_size(backend, "u1") == 1
    match = memory.retrieve("u1", WEATHER)
    assert (match.result, match.age_s, match.intention) == ("second", 0.0, "what is the weather in Paris today")
    clock.now += 5
    memory.store("u1", WEATHER, "third", tool="get_weather", args={"city": "Paris", "units": "F"})
    assert index_size(backend, "u1") == 2
    assert memory.retrieve("u1", WEATHER).result == "third"  # the most recent exact match wins


def test_identical_result_is_stored_once(memory, backend):
    memory.store("u1", "How many open tickets do I have?", {"open": 7})
    memory.store("u1", "Count my open tickets", {"open": 7})
    assert index_size(backend, "u1") == 2
    a = memory.retrieve("u1", "How many open tickets do I have?")
    b = memory.retrieve("u1", "Count my open tickets")
    assert a.result_hash == b.result_hash and a.memory_id != b.memory_id
    if not isinstance(backend, InMemoryIntentionBackend):
        keys = sorted(k.decode() for k in backend.client.scan_iter(match=backend.prefix + "*"))
        assert [k.rsplit(":", 2)[-2] for k in keys] == ["idx", "mem", "mem", "res"][: len(keys)] or keys
        assert sum(":res:" in k for k in keys) == 1
        assert sum(":mem:" in k for k in keys) == 2


def test_threshold_one_means_exact_only(backend, clock):
    memory = IntentionMemory(backend, ttl_s=600, threshold=1.0, clock=clock)
    memory.store("u1", WEATHER, "sunny")
    assert memory.retrieve("u1", "What's the weather like in Paris today?") is None
    assert memory.retrieve("u1", "what is the weather in paris today?").kind == "exact"


def test_a_stored_content_word_without_equivalent_is_a_miss_at_any_margin(backend, clock):
    # Before the verifier, the margin rule decided (a loose margin served one of them); now "card"/"account" has
    # no equivalent in the query, whatever the margin.
    memory = IntentionMemory(backend, ttl_s=600, clock=clock, threshold=0.5, margin=0.05)
    memory.store("u1", "show my card transactions", "card list")
    memory.store("u1", "show my account transactions", "account list")
    assert memory.retrieve("u1", "show my transactions") is None
    loose = IntentionMemory(backend, ttl_s=600, clock=clock, threshold=0.0, margin=0.0)
    assert loose.retrieve("u1", "show my transactions") is None
    assert loose.retrieve("u1", "please show my card transactions").result == "card list"


async def test_async_twins(memory, backend, clock):
    assert await memory.astore("u1", WEATHER, [1, 2, 3], tool="t", args={"a": 1}) is True
    assert (await memory.aretrieve("u1", WEATHER)).result == [1, 2, 3]
    match = await memory.aretrieve("u1", "What's the weather like in Paris today?")
    assert (match.kind, match.result) == ("similar", [1, 2, 3])
    assert await memory.aretrieve("u2", WEATHER) is None
    clock.now += 601
    assert await memory.aretrieve("u1", WEATHER) is None
    assert index_size(backend, "u1") == 0
    await memory.astore("u1", WEATHER, "x")
    assert await memory.aforget("u1") == 1
    assert await memory.aretrieve("u1", WEATHER) is None


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"intention": ""}, ValueError, "''"),
        ({"intention": " ?! "}, ValueError, "' ?! '"),
        ({"intention": None}, TypeError, "NoneType"),
        ({"result": object()}, TypeError, "JSON-serialisable"),
        ({"result": {"when": {1, 2}}}, TypeError, "JSON-serialisable"),
        ({"args": {"f": print}}, TypeError, "JSON-serialisable"),
        ({"user_id": ""}, ValueError, "user_id"),
        ({"user_id": None}, ValueError, "user_id"),
        ({"tool": ""}, ValueError, "tool"),
        ({"result": {"a": None, "b": (1, -math.inf)}}, ValueError, "result must hold finite numbers .* got -inf"),
        ({"args": {"lat": math.nan}}, ValueError, "args must hold finite numbers .* got nan"),
    ],
)
def test_bad_store_input_raises_and_writes_nothing(memory, backend, kwargs, error, text):
    call = {"user_id": "u1", "intention": WEATHER, "result": "ok", "tool": None, "args": None, **kwargs}
    with pytest.raises(error, match=text.replace("?", r"\?")):
        memory.store(**call)
    assert index_size(backend, "u1") == 0


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"threshold": 1.5}, "threshold must be a number in \\[0, 1\\], got 1.5"),
        ({"threshold": -0.1}, "threshold must be a number in \\[0, 1\\], got -0.1"),
        ({"threshold": math.nan}, "threshold"),
        ({"margin": 2}, "margin must be a number in \\[0, 1\\], got 2"),
        ({"ttl_s": 0}, "ttl_s .* got 0"),
        ({"ttl_s": -5}, "ttl_s .* got -5"),
        ({"ttl_s": None}, "ttl_s .* None"),
    ],
)
def test_bad_constructor_arguments(kwargs, text):
    with pytest.raises(ValueError, match=text):
        IntentionMemory(**kwargs)


def test_bad_backend_and_retrieve_input():
    with pytest.raises(TypeError, match="IntentionBackend"):
        IntentionMemory(backend={})
    memory = IntentionMemory()
    with pytest.raises(ValueError, match="intention"):
        memory.retrieve("u1", "")


def test_bounded_memories_per_user_drop_the_oldest(clock):
    for backend_bound in (InMemoryIntentionBackend(max_memories_per_user=3),):
        memory = IntentionMemory(backend_bound, ttl_s=600, clock=clock)
        for i in range(5):
            clock.now += 1
            memory.store("u1", f"intention number {i}", i)
        assert backend_bound.index_size("u1") == 3
        assert memory.retrieve("u1", "intention number 0") is None
        assert memory.retrieve("u1", "intention number 4").result == 4
