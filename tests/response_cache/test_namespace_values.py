"""Values that go into a key namespace are checked like scopes, and may not hold the separator ``:``: with
``agent_id="shop:<8 hex>"`` an unscoped cache would share the namespace of agent ``"shop"``'s scoped entries."""

from __future__ import annotations

import hashlib

import pytest

from promptcache import InMemoryServerCache, ResponseCache
from promptcache._config import validate_key_part
from promptcache.replay._repeats import response_cache_key
from promptcache.response_cache._keys import key_namespace


def test_a_colon_in_agent_id_would_reach_another_namespace():
    forged = "shop:" + hashlib.sha256(b"alice").hexdigest()[:8]
    assert key_namespace(forged, None) == key_namespace("shop", "alice")  # why the check exists
    with pytest.raises(ValueError, match=r"agent_id must not contain ':' \(the key separator\), got 'shop:"):
        ResponseCache(InMemoryServerCache(), agent_id=forged)


@pytest.mark.parametrize(
    ("agent_id", "error", "message"),
    [
        ("", ValueError, "agent_id must be a non-empty string, got ''"),
        ("  ", ValueError, "agent_id must be a non-empty string, got '  '"),
        ("a\ud800", ValueError, "agent_id must be valid Unicode text"),
        ("a\x00b", ValueError, "agent_id must not contain a NUL character"),
        (5, TypeError, "agent_id must be a str, got int: 5"),
        (None, TypeError, "agent_id must be a str, got NoneType: None"),
    ],
)
def test_bad_agent_id_is_refused(agent_id, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(")):
        ResponseCache(InMemoryServerCache(), agent_id=agent_id)


def test_replay_key_checks_agent_id_alike():
    with pytest.raises(ValueError, match="agent_id must not contain ':'"):
        response_cache_key([], "model-a", agent_id="a:b")


def test_good_values_pass_unchanged():
    assert validate_key_part("support-bot_2.eu", "agent_id") == "support-bot_2.eu"
    assert ResponseCache(InMemoryServerCache(), agent_id="café").agent_id == "café"
