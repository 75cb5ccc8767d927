"""One spelling for TTLs in seconds: ``ResponseCache(ttl_s=...)``; ``ttl=`` (its former name) still works with a
``DeprecationWarning``; the replay's ``--response-cache-ttl-s`` with ``--response-cache-ttl`` kept."""

from __future__ import annotations

import inspect
import json
import warnings
from pathlib import Path

import pytest

from promptcache import InMemoryServerCache, IntentionMemory, ResponseCache, TypedMemoryStore
from promptcache._cli import main
from promptcache.integrations.bedrock import BedrockCachePoints, CachePointChatBedrockConverse

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "sample_conversations.json"


def test_ttl_s_is_the_name_and_no_warning_is_given() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache = ResponseCache(InMemoryServerCache(), ttl_s=42)
    assert cache.ttl_s == 42
    assert ResponseCache(InMemoryServerCache()).ttl_s == 300


def test_old_name_still_works_and_warns() -> None:
    with pytest.warns(DeprecationWarning, match=r"ResponseCache\(ttl=\.\.\.\) is deprecated: use ttl_s=\.\.\."):
        cache = ResponseCache(InMemoryServerCache(), ttl=7)
    assert cache.ttl_s == 7
    with pytest.warns(DeprecationWarning, match="ResponseCache.ttl is deprecated: use ResponseCache.ttl_s"):
        assert cache.ttl == 7


def test_deprecation_points_at_the_callers_line() -> None:
    with pytest.warns(DeprecationWarning) as caught:
        ResponseCache(InMemoryServerCache(), ttl=7)
    assert caught[0].filename == __file__


def test_both_names_at_once_are_refused() -> None:
    with pytest.raises(TypeError, match=r"ResponseCache: pass ttl_s= only \(ttl= is its deprecated name\), got both"):
        ResponseCache(InMemoryServerCache(), ttl_s=10, ttl=20)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"ttl_s": 0}, ValueError, "ttl_s"),
        ({"ttl_s": None}, TypeError, "ttl_s must be a number of seconds > 0, got None"),
        ({"ttl_s": "300"}, TypeError, "ttl_s"),
    ],
)
def test_bad_ttl_s_names_the_argument(kwargs: dict, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        ResponseCache(InMemoryServerCache(), **kwargs)


def test_every_public_ttl_in_seconds_is_spelled_ttl_s() -> None:
    owners = [ResponseCache, IntentionMemory, TypedMemoryStore, TypedMemoryStore.put, BedrockCachePoints]
    names = {n for owner in owners for n in inspect.signature(owner).parameters if "ttl" in n}
    names |= {n for n in CachePointChatBedrockConverse.model_fields if "ttl" in n}
    # `ttl` is the deprecated alias; `cache_ttl` is Bedrock's TTL class ("5m" | "1h"), not seconds
    assert names == {"ttl_s", "ttl", "project_state_ttl_s", "placement_ttl_s", "cache_ttl"}


@pytest.mark.parametrize("option", ["--response-cache-ttl-s", "--response-cache-ttl"])
def test_replay_option_both_spellings(option: str, tmp_path: Path) -> None:
    assert main(["replay", str(SAMPLE), option, "86400", "--no-chart", "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "replay.json").read_text())["response_cache"]["ttl_s"] == 86400
