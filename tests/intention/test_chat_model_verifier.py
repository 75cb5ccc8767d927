"""ChatModelVerifier: a chat model judges the similar candidates the lexical verifier turns away; verdicts are
cached per (new intention, earlier intention, result); any failure is no match."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from promptcache.intention import IntentionMemory
from promptcache.intention._judges import ChatModelVerifier, LexicalVerifier, as_verifier
from promptcache.testing import ScriptedChatModel

STORED = "weather in Paris"
ASKED = "Paris weather"  # the same request, but a noun compound: the lexical verifier says no


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def make(replies=(), error=None):
    model = ScriptedChatModel(replies=list(replies), error=error)
    memory = IntentionMemory(ttl_s=600, verifier=ChatModelVerifier(model), clock=Clock())
    memory.store("u1", STORED, {"temp_c": 21}, tool="get_weather", args={"city": "Paris"})
    return memory, model


def test_the_lexical_verifier_alone_misses_this_pair():
    memory = IntentionMemory(ttl_s=600)
    memory.store("u1", STORED, {"temp_c": 21})
    assert memory.retrieve("u1", ASKED) is None


def test_a_yes_serves_the_earlier_result_and_is_cached():
    memory, model = make(["YES"])
    match = memory.retrieve("u1", ASKED)
    assert (match.kind, match.result, match.verified_by, match.intention) == (
        "similar",
        {"temp_c": 21},
        "chat-model",
        STORED,
    )
    assert match.note.startswith("judged to answer it by chat-model (lexically: ")
    assert model.calls == 1
    system, human = model.seen[0]
    assert isinstance(system, SystemMessage) and isinstance(human, HumanMessage)
    assert human.content == (
        'Earlier request: weather in Paris\nIts result: {"temp_c":21}\nNew request: Paris weather\n'
        "Does the earlier result answer the new request? Answer YES or NO."
    )
    assert memory.retrieve("u1", ASKED).result == {"temp_c": 21}
    assert memory.retrieve("u1", "paris weather!").result == {"temp_c": 21}  # same normalised pair: cached
    assert model.calls == 1


def test_a_no_is_a_miss_and_is_cached():
    memory, model = make(["No."])
    assert memory.retrieve("u1", ASKED) is None
    assert memory.retrieve("u1", ASKED) is None
    assert model.calls == 1


@pytest.mark.parametrize("reply", ["maybe", "", "It depends"])
def test_an_unclear_reply_is_a_miss_and_not_cached(reply):
    memory, model = make([reply, "yes"])
    assert memory.retrieve("u1", ASKED) is None
    assert memory.retrieve("u1", ASKED).result == {"temp_c": 21}  # asked again: the second reply is a yes
    assert model.calls == 2


def test_a_failing_model_is_a_miss_and_the_lookup_does_not_raise():
    memory, model = make(error=RuntimeError("model down"))
    assert memory.retrieve("u1", ASKED) is None
    assert memory.retrieve_all("u1", ASKED, fail_open=False) == []


def test_lexically_equivalent_and_exact_matches_do_not_ask_the_model():
    memory, model = make(["NO"])
    assert memory.retrieve("u1", "Weather in Paris?").kind == "exact"
    match = memory.retrieve("u1", "please tell me the weather in Paris")
    assert (match.kind, match.verified_by) == ("similar", "lexical")
    assert model.calls == 0


def test_numbers_and_names_that_disagree_are_never_put_to_the_model():
    memory, model = make(["YES", "YES"])
    assert memory.retrieve("u1", "London weather") is None
    memory.store("u1", "flights to Rome on May 3", "r")
    assert memory.retrieve("u1", "Rome flights on May 4") is None
    assert model.calls == 0


def test_exact_only_never_asks():
    memory, model = make(["YES"])
    assert memory.retrieve("u1", ASKED, exact_only=True) is None
    assert model.calls == 0


async def test_async_lookup_asks_with_ainvoke_and_shares_the_cache():
    memory, model = make(["YES"])
    match = await memory.aretrieve("u1", ASKED)
    assert (match.result, match.verified_by) == ({"temp_c": 21}, "chat-model")
    assert memory.retrieve("u1", ASKED).result == {"temp_c": 21}
    assert model.calls == 1


def test_max_checks_bounds_the_questions_per_lookup():
    model = ScriptedChatModel(replies=["NO"], cycle=True)
    memory = IntentionMemory(ttl_s=600, verifier=ChatModelVerifier(model, max_checks=2), clock=Clock())
    for i, text in enumerate(["weather in Paris", "weather forecast in Paris", "Paris weather report"]):
        memory.store("u1", text, i)
    assert memory.retrieve("u1", "Paris weather") is None
    assert model.calls == 2


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="chat model"):
        ChatModelVerifier(object())
    with pytest.raises(ValueError, match="max_checks must be an int >= 1, got 0"):
        ChatModelVerifier(ScriptedChatModel(), max_checks=0)
    with pytest.raises(ValueError, match="cache_size must be an int >= 0, got -1"):
        ChatModelVerifier(ScriptedChatModel(), cache_size=-1)
    with pytest.raises(TypeError, match="wrap a chat model in ChatModelVerifier"):
        as_verifier(ScriptedChatModel())
    assert isinstance(as_verifier(None), LexicalVerifier)
    with pytest.raises(TypeError, match="verifier must be a Verifier or None"):
        IntentionMemory(verifier="lexical")
