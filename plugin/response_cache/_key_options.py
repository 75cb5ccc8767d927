"""``ResponseCache``'s ``key`` and ``bust`` options: their checks, and running an async key function from sync code."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import TypeVar

from promptcache._config import check_unicode

__all__ = ["check_bust", "check_key", "run_coroutine"]

_T = TypeVar("_T")


def check_key(key: object, what: str) -> None:
    """Check a ``key`` option: a non-empty ``str`` of valid Unicode text, or a callable.

    Raises:
        ValueError: an empty or all-whitespace string, or one holding a lone surrogate. TypeError: neither a ``str`` nor a callable;
            the message names ``what`` and the value.
    """
    if isinstance(key, str):
        if not key.strip():  # blank, refused like a blank scope
            raise ValueError(f"{what} must be a non-empty string or a callable, got {key!r}")
        check_unicode(key, what)
    elif not callable(key):
        raise TypeError(
            f"{what} must be a str or a callable(ResponseCacheKeyInputs), got {type(key).__name__}: {key!r}"
        )


def check_bust(bust: object, what: str) -> bool:
    """``bust`` unchanged when it is a ``bool``.

    Raises:
        TypeError: anything else (no truthiness); the message names ``what`` and the value.
    """
    if not isinstance(bust, bool):
        raise TypeError(f"{what} must be a bool, got {type(bust).__name__}: {bust!r}")
    return bust


def run_coroutine(coro: Coroutine[object, object, _T]) -> _T:
    """Run a coroutine from sync code (a sync call with an async key function)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # a loop is running in this thread
        return pool.submit(asyncio.run, coro).result()
