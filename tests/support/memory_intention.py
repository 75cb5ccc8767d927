"""Fixtures shared by the typed-memory and intention-cache corruption tests."""

from __future__ import annotations


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
