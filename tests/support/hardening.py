"""Helpers shared by the bad-input tests of several components."""

from __future__ import annotations

import logging

from promptcache.backends import ServerCache

NAN, INF = float("nan"), float("inf")


DEAD_REDIS = "redis://127.0.0.1:1/0"


def promptcache_warnings(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("promptcache") and r.levelno >= logging.WARNING]


class RaisingCache(ServerCache):
    """A ServerCache subclass whose every method raises (a broken custom backend)."""

    def get(self, key):
        raise RuntimeError("get exploded")

    def set(self, key, value, ttl_s=None):
        raise RuntimeError("set exploded")

    def delete(self, key):
        raise RuntimeError("delete exploded")

    def clear(self, prefix=""):
        raise RuntimeError("clear exploded")

    def get_many(self, keys):
        raise RuntimeError("get_many exploded")

    def ttl(self, key):
        raise RuntimeError("ttl exploded")

    async def aget(self, key):
        raise RuntimeError("aget exploded")

    async def aset(self, key, value, ttl_s=None):
        raise RuntimeError("aset exploded")
