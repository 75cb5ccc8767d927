"""A number keeps everything that changes its value (decimal point or comma, sign, grouping, power, fraction):
two intentions whose numbers differ in value never share an exact key, a normal form or a match, at any threshold,
in memory and on Redis, with the lexical default and with embeddings that score every pair as identical. The same
number written the same way still matches; memories indexed before the number rules changed are re-indexed on read."""

from __future__ import annotations

from dataclasses import replace

import pytest
from support.intention_embeddings import SameVector, older_normal_form

from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.intention import InMemoryIntentionBackend, IntentionMemory, _meaning
from promptcache.intention._judges import ChatModelVerifier
from promptcache.intention._meaning import signature
from promptcache.intention._normalize import anchors, normalize_intention
from promptcache.intention._numbers import canonical
from promptcache.intention._record import signature_version
from promptcache.intention._vetoes import exact_key, veto
from promptcache.testing import ScriptedChatModel

NOW = 1_800_000_000.0

# (stored, asked): the numbers differ in value, or may (an ambiguous spelling is kept as written).
DIFFERENT = [
    ("transfer 5 BTC", "transfer .5 BTC"),
    ("pay 15 euro", "pay 1,5 euro"),
    ("pay 1.5 euro", "pay 1,5 euro"),
    ("pay 52 dollars", "pay 5² dollars"),
    ("pay 25 dollars", "pay 2^5 dollars"),
    ("pay 5² dollars", "pay 2^5 dollars"),
    ("dilute to 10³", "dilute to 10⁻³"),
    ("install version 123", "install version 1.2.3"),
    ("install version 1.2.3", "install version 1.23"),
    ("install v1.2.3", "install v1.23"),
    ("transfer 5 BTC", "transfer.5 BTC"),
    ("pay 5 euro", "pay -5 euro"),
    ("set the volume to 5", "set the volume to +5"),
    ("transfer 150 EUR", "transfer 1,50 EUR"),
    ("send 25 kg", "send 2,5 kg"),
    ("pay 1000 euro", "pay 1,000 euro"),
    ("pay 1500 euro", "pay 1.500 euro"),
    ("pay 1 euro", "pay 1.000 euro"),
    ("pay 12 euro", "pay 1/2 euro"),
    ("pay 2/1 euro", "pay 1/2 euro"),
    ("pay 1000000 euro", "pay 1.000.000 euro"),
    ("set a 5% tip", "set a 5 tip"),
]

# (stored, asked, kind at the default threshold): the same value, written the same way or in one unambiguous form.
SAME = [
    ("transfer .5 BTC", "Transfer .5 BTC!", "exact"),
    ("pay 1,5 euro", "pay 1,5 euro.", "exact"),
    ("pay 5² dollars", "pay 5^2 dollars", "exact"),
    ("pay -5 euro", "pay \u22125 euro", "exact"),
    ("pay 1/2 euro", "pay ½ euro", "exact"),
    ("install version 1.2.3", "Install version 1.2.3.", "exact"),
    ("install version 1.2.3", "install version 1.2.3, please", "similar"),
    ("transfer .5 BTC", "please transfer .5 BTC", "similar"),
    ("transfer 0.5 BTC", "transfer .5 BTC", "similar"),
    ("pay 1,000,000 dollars", "pay 1000000 dollars", "similar"),
    ("pay 1.000,50 euro", "pay 1,000.50 euro", "similar"),
    ("send 2,5 kg", "please send 2,5 kg", "similar"),
]

THRESHOLDS = [1.0, None, 0.0]  # None: the default


@pytest.fixture(params=["memory", "redis"])
def backend(request):
    if request.param == "memory":
        yield InMemoryIntentionBackend()
        return
    redis_url, prefix = request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
    made = RedisIntentionBackend(url=redis_url, prefix=prefix)
    yield made
    made.close()


def test_numbers_keep_what_changes_their_value():
    assert normalize_intention("pay .5") == "pay 0.5"
    assert normalize_intention("pay 1,5") == "pay 1,5"
    assert normalize_intention("pay 5²") == "pay 5^2"
    assert normalize_intention("version 1.2.3") == "version 1.2.3"
    assert normalize_intention("pay -5") == "pay -5"
    assert normalize_intention("pay 1/2 or ½") == "pay 1/2 or 1/2"
    assert normalize_intention("dilute to 10⁻³") == "dilute to 10^-3"
    assert normalize_intention("pay 1,000,000 or 1,000.50 or 1.000,50") == "pay 1000000 or 1000.50 or 1000.50"
    assert normalize_intention("pay 1,000 or 1.500 or 0.500 or 1.50 or 007") == (
        "pay 1,000 or 1.500 or 0.500 or 1.50 or 007"
    )
    assert [canonical(t) for t in ("1E5", "+5", "12/05/2026", "1,5,7")] == ["1e5", "+5", "12/05/2026", "1,5,7"]
    assert exact_key("Transfer .5 BTC, now!") == "transfer .5 BTC now"
    assert exact_key("pay 5² dollars.") == "pay 5^2 dollars"
    assert anchors("pay 1,5 euro and .5 BTC").numbers == {"1,5", "0.5"}
    assert anchors("install v1.2.3").entities == {"v1.2.3"}


@pytest.mark.parametrize("stored, asked", DIFFERENT)
def test_different_numbers_never_share_a_key_or_a_normal_form(stored, asked):
    assert exact_key(stored) != exact_key(asked)
    assert normalize_intention(stored) != normalize_intention(asked)
    assert signature(stored) != signature(asked)
    # "5% tip" / "5 tip": the same number counting another thing (the word after it differs)
    assert veto(asked, stored) == "numbers"
    assert veto(stored, asked) == "numbers"


@pytest.mark.parametrize("stored, asked", DIFFERENT)
@pytest.mark.parametrize("threshold", THRESHOLDS)
@pytest.mark.parametrize("with_embeddings", [False, True])
def test_different_numbers_are_never_served(backend, stored, asked, threshold, with_embeddings):
    emb = SameVector() if with_embeddings else None
    memory = IntentionMemory(backend, ttl_s=600, threshold=threshold, embeddings=emb, clock=lambda: NOW)
    assert memory.store("u1", stored, {"ok": True}, tool="pay", args={"n": 1}) is True
    assert memory.retrieve("u1", asked) is None
    assert memory.retrieve("u1", asked, tool="pay", args={"n": 1}) is None
    assert memory.retrieve("u1", stored).kind == "exact"


@pytest.mark.parametrize("stored, asked, kind", SAME)
@pytest.mark.parametrize("threshold", THRESHOLDS)
@pytest.mark.parametrize("with_embeddings", [False, True])
def test_the_same_number_still_matches(backend, stored, asked, kind, threshold, with_embeddings):
    emb = SameVector() if with_embeddings else None
    memory = IntentionMemory(backend, ttl_s=600, threshold=threshold, embeddings=emb, clock=lambda: NOW)
    assert memory.store("u1", stored, "paid", tool="pay", args={"n": 1}) is True
    match = memory.retrieve("u1", asked)
    if kind == "similar" and threshold == 1.0:
        assert match is None  # threshold 1.0: exact matches only
    else:
        assert (match.kind, match.result, match.args) == (kind, "paid", {"n": 1})


@pytest.mark.parametrize("stored, asked", DIFFERENT)
@pytest.mark.parametrize("threshold", [None, 0.0])
def test_a_model_that_says_yes_to_everything_is_never_asked(backend, stored, asked, threshold):
    model = ScriptedChatModel(replies=["YES"] * 4)
    verifier = ChatModelVerifier(model)
    memory = IntentionMemory(backend, ttl_s=600, threshold=threshold, verifier=verifier, clock=lambda: NOW)
    assert memory.store("u1", stored, {"ok": True}, tool="pay") is True
    assert memory.retrieve("u1", asked) is None
    assert model.calls == 0


@pytest.mark.parametrize("threshold", [None, 0.0])
def test_three_neighbours_with_one_result_do_not_outvote_the_number(backend, threshold):
    memory = IntentionMemory(backend, ttl_s=600, threshold=threshold, embeddings=SameVector(), clock=lambda: NOW)
    for text in ("transfer 5 BTC", "send 5 BTC", "move 5 BTC to my wallet"):
        assert memory.store("u1", text, "sent 5", tool="transfer") is True
    for asked in ("transfer .5 BTC", "send -5 BTC", "move 5² BTC to my wallet", "send 5,5 BTC"):
        assert memory.retrieve("u1", asked) is None
    assert memory.retrieve("u1", "send 5 BTC").kind == "exact"


def test_a_leading_point_or_a_decimal_comma_is_never_dropped_in_memory():
    mem = IntentionMemory(ttl_s=3600, clock=lambda: NOW)
    mem.store("alice", "transfer 5 BTC", {"ok": True}, tool="transfer", args={"amount": 5})
    assert mem.retrieve("alice", "transfer .5 BTC") is None
    assert mem.retrieve("alice", "transfer 5 BTC").kind == "exact"
    mem.store("carol", "pay 15 euro", {"ok": True}, tool="pay", args={"amount": 15})
    assert mem.retrieve("carol", "pay 1,5 euro") is None
    assert mem.retrieve("carol", "please pay 15 euro").kind == "similar"


@pytest.fixture
def m1_rules(monkeypatch):
    """Signatures as the normal form of version ``m1`` wrote them (``use(False)``: the current rules again)."""
    yield from older_normal_form(monkeypatch, "m1")


def _as_m1(backend, record, read_as: str) -> None:
    """Store ``record`` again as the ``m1`` rules made it: its numbers read as in ``read_as`` ("1,5" as "15")."""
    old = replace(record, signature=signature(read_as), normalized=normalize_intention(read_as))
    backend.reindex("u1", [old], signature_version(old.signature), NOW)


def test_memories_stored_under_the_m1_rules_are_found_when_their_number_is_unchanged(backend, m1_rules):
    old = IntentionMemory(backend, ttl_s=600, clock=lambda: NOW)
    for text, result in [("pay 15 euro", "fifteen"), ("turn off the bedroom lights", "off"), ("pay 1,5 euro", "x")]:
        assert old.store("u1", text, result, tool="pay") is True
    m1 = signature_version(signature("pay 15 euro"))
    assert m1.startswith("m1-")
    comma = next(r for r in backend.records("u1", NOW) if r.intention == "pay 1,5 euro")
    _as_m1(backend, comma, "pay 15 euro")  # under m1, "1,5" read "15": one signature for both
    assert {r.signature_version for r in backend.records("u1", NOW)} == {m1}
    m1_rules(False)
    current = signature_version(signature("pay 15 euro"))
    assert current.startswith(f"{_meaning.NORMAL_FORM_VERSION}-") and current != m1
    new = IntentionMemory(backend, ttl_s=600, clock=lambda: NOW)
    match = new.retrieve("u1", "pay 15 euro")
    assert (match.kind, match.result) == ("exact", "fifteen")
    assert (new.retrieve("u1", "please pay 15 euro").kind, new.retrieve("u1", "please pay 15 euro").result) == (
        "similar",
        "fifteen",
    )
    assert new.retrieve("u1", "turn off the bedroom lights").result == "off"
    assert (new.retrieve("u1", "pay 1,5 euro").kind, new.retrieve("u1", "pay 1,5 euro").result) == ("exact", "x")
    assert new.retrieve("u1", "please pay 1,5 euro").result == "x"
    assert new.retrieve("u1", "pay 5 euro") is None
    # Re-indexed in place: every record under the current rules, "1,5" apart from "15" again.
    records = {r.intention: r for r in backend.records("u1", NOW)}
    assert {r.signature_version for r in records.values()} == {current}
    assert records["pay 1,5 euro"].signature != records["pay 15 euro"].signature
