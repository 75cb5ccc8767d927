"""The lexical verifier's normal form (promptcache.intention._meaning): which differences are equivalences, which
block a match, and how a difference is explained."""

from __future__ import annotations

import pytest

from promptcache.intention._meaning import analyze, compare, explain, signature
from promptcache.intention._vocabulary import default_vocabulary


@pytest.mark.parametrize(
    "a, b",
    [
        ("send $50 to Bob", "send 50 dollars to bob"),  # a sign before its number, a unit's plural after one
        ("five tickets", "5 tickets"),
        ("Who's on call this weekend?", "who is on call this weekend"),
        ("I want to cancel my order", "cancel my order"),  # the form of a request
        ("remind me tomorrow to call mom", "remind me to call mom tomorrow"),  # a free adverb moves
        ("flights to London from Paris", "flights from Paris to London"),  # role phrases in any order
        ("could you turn off the heating", "turn off the heating"),
        ("I'd like to book a table", "book a table"),
        ("what is my balance now", "now what is my balance"),
        ("what is on tv tonight", "what's on television tonight"),  # another spelling of one word
        ("send an e-mail to Bob", "send an email to Bob"),
        ("can you tell me the weather in Oslo", "the weather in Oslo"),  # "tell me": asked to be told
    ],
)
def test_equivalent(a, b):
    assert compare(a, b) is None
    assert signature(a) == signature(b)


@pytest.mark.parametrize(
    "a, b, why",
    [
        ("send $50 to bob", "send €50 to bob", "'dollar' in 'send $50 to bob' has no equivalent in the other"),
        ("did my card arrive", "will my card arrive", "'did' in 'did my card arrive' has no equivalent in the other"),
        ("can I pay by card", "could I pay by card", "'can' in 'can I pay by card' has no equivalent in the other"),
        ("do I want to cancel my order", "cancel my order", "mood differs (question vs none)"),
        ("does he want to cancel", "he wants to cancel", "mood differs (question vs none)"),
        ("is my transfer pending?", "My transfer is pending.", "mood differs (question vs statement)"),
        (
            "I want to cancel my order",
            "do I want to cancel my order",
            "mood differs (none vs question)",
        ),
        ("cancel my orders", "cancel my order", "'orders' in 'cancel my orders' has no equivalent in the other"),
        ("show my balance", "I can't see my balance", "negation differs (0 vs 1)"),
        ("turn the lights off", "turn the lights on", "roles differ: 'off' vs 'on'"),
        ("the second chapter", "the 2nd chapter", "'second' in 'the second chapter' has no equivalent in the other"),
    ],
)
def test_not_equivalent(a, b, why):
    assert compare(a, b) == why
    assert signature(a) != signature(b)


def test_the_normal_form():
    m = analyze("could you book a flight from Paris to London tomorrow please").meaning
    assert (m.bare, m.roles, m.free, m.negations) == (
        ("book", "flight"),
        (("from", ("pari",)), ("to", ("london",))),
        ("tomorrow",),
        0,
    )


def test_explain_names_what_differs_in_wording():
    assert explain("send $50 to Bob", "send 50 dollars to bob") == "inflection or contractions"
    assert explain("what's the weather in Oslo", "What is the weather in Oslo?") == "case and punctuation only"
    assert explain("weather in Oslo", "Weather in oslo!") == "case and punctuation only"
    assert explain("weather in Oslo today", "today weather in Oslo") == "word order"
    assert explain("log in to my account", "please login to my account") == (
        "the earlier one adds 'please'; 'login' for your 'log in'"
    )


def test_signatures_carry_the_vocabulary_version():
    vocab = default_vocabulary()
    assert len(vocab.version) == 12
    assert signature("weather in Oslo").startswith(f"m4-{vocab.version}-")
    assert vocab.classes["televis"] == "tv" and vocab.phrases[("log", "in")] == "login"  # stems
