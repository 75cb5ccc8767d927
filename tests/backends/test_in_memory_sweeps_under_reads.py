"""``len()`` and ``clear()`` of the in-memory backend walk its entries while other threads read without a lock
(a read moves its key to the recent end): the walk must never see the dict change under it."""

from __future__ import annotations

import sys
import threading

import pytest

from promptcache import InMemoryServerCache


@pytest.mark.parametrize("sweep", ["clear", "len"])
def test_sweeps_never_raise_while_other_threads_read(sweep: str) -> None:
    cache = InMemoryServerCache(max_entries=5000)
    for i in range(4000):
        cache.set(f"k{i}", b"v", 1000.0)  # an expiry: every read also checks the clock
    errors: list[BaseException] = []
    done = threading.Event()

    def reader() -> None:
        i = 0
        while not done.is_set():
            try:
                cache.get(f"k{i % 4000}")
            except Exception as exc:  # noqa: BLE001 - every error is the finding
                errors.append(exc)
            i += 7

    def sweeper() -> None:
        try:
            for _ in range(60):
                cache.clear("zzz") if sweep == "clear" else len(cache)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            done.set()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    try:
        threads = [threading.Thread(target=reader), threading.Thread(target=reader), threading.Thread(target=sweeper)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    finally:
        sys.setswitchinterval(interval)
    assert [repr(e) for e in errors] == []
    assert len(cache) == 4000
