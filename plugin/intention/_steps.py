"""One lookup logic for sync and async callers: the logic is a generator that yields the calls it needs.

A step function of the intention package (`promptcache.intention._lookup.find`, ...) never calls a backend,
a similarity or a verifier itself: it yields a `Call` (``(object, method name, arguments)``) and is sent the
answer. `run` answers with the sync method (``records``), `arun` awaits the async twin of the same name with an
``a`` in front (``arecords``): every backend, `Similarity` and `Verifier` method a step needs has one. So the
logic is written once and the sync and async shells cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, NamedTuple, TypeVar

__all__ = ["Call", "Steps", "arun", "call", "run"]

T = TypeVar("T")


class Call(NamedTuple):
    """A call a step needs answered: ``target.method(*args)`` (sync) or ``await target.amethod(*args)`` (async)."""

    target: object
    method: str
    args: tuple[object, ...]


Steps = Generator[Call, Any, T]
"""A step function's generator: yields `Call`, returns its result. What a yield gives back is the called method's
result, looked up by name at run time: unknown to the type system (hence ``Any``)."""


def call(target: object, method: str, *args: object) -> Call:
    """The `Call` of ``target.method(*args)``."""
    return Call(target, method, args)


def run(steps: Steps[T]) -> T:
    """Drive ``steps`` with sync calls; returns its result (exceptions of a call are thrown into it)."""
    try:
        request = next(steps)
        while True:
            try:
                answer = getattr(request.target, request.method)(*request.args)
            except Exception as exc:  # noqa: BLE001 - handed to the step, which re-raises or handles it
                request = steps.throw(exc)
            else:
                request = steps.send(answer)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]  # the generator's return value


async def arun(steps: Steps[T]) -> T:
    """Drive ``steps`` with the async twins (``a`` + method name) of the calls; returns its result."""
    try:
        request = next(steps)
        while True:
            try:
                answer = await getattr(request.target, "a" + request.method)(*request.args)
            except Exception as exc:  # noqa: BLE001
                request = steps.throw(exc)
            else:
                request = steps.send(answer)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
