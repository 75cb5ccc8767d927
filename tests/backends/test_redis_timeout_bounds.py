"""A Redis backend's timeouts are bounded (`MAX_SECONDS`, one day): a larger one is refused when the backend is
built, not turned into an overflow on every call (a cache that silently never hits)."""

from __future__ import annotations

import pytest

from promptcache.integrations.redis import RedisCache, RedisIntentionBackend


@pytest.mark.parametrize("backend", [RedisCache, RedisIntentionBackend])
@pytest.mark.parametrize("option", ["socket_timeout_s", "breaker_s"])
def test_a_timeout_over_a_day_is_refused_at_construction(backend: type, option: str) -> None:
    with pytest.raises(ValueError, match=rf"^{option} must be a finite number of seconds .* <= 86,400, got 1e\+100$"):
        backend(url="redis://127.0.0.1:6379/0", **{option: 1e100})
