"""Shared helpers for the typed-memory tests: a read-counting InMemoryStore and PostgreSQL cleanup."""

from __future__ import annotations

from collections import Counter

from langgraph.store.base import GetOp, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from promptcache.memory._store_sharing import VERSION_LABEL


class CountingStore(InMemoryStore):
    """The real ``InMemoryStore``, counting the operations it serves, by (op, kind label)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.ops: Counter = Counter()

    def _count(self, ops):
        ops = list(ops)
        for op in ops:
            if isinstance(op, SearchOp):
                self.ops[("search", op.namespace_prefix[-1])] += 1
            elif isinstance(op, GetOp):
                self.ops[("get", op.namespace[-1])] += 1
            elif isinstance(op, PutOp):
                self.ops[("put" if op.value is not None else "delete", op.namespace[-1])] += 1
        return ops

    def batch(self, ops):
        return super().batch(self._count(ops))

    async def abatch(self, ops):
        return await super().abatch(self._count(ops))

    def reads(self, kind: str | None = None) -> int:
        """Reads of memories (of ``kind``); the per-scope version item is counted apart (:meth:`version_ops`)."""
        return sum(
            n
            for (op, k), n in self.ops.items()
            if op in {"search", "get"} and k != VERSION_LABEL and (kind is None or k == kind)
        )

    def writes(self) -> int:
        """Writes and deletes of memories; the version item's are in :meth:`version_ops`."""
        return sum(n for (op, k), n in self.ops.items() if op in {"put", "delete"} and k != VERSION_LABEL)

    def version_ops(self, op: str) -> int:
        """How many times the per-scope version item was read (``"get"``) or given a new value (``"put"``)."""
        return self.ops[(op, VERSION_LABEL)]


def purge_prefix(store, prefix: tuple[str, ...]) -> None:
    """Delete every item under ``prefix`` (sync BaseStore)."""
    for ns in store.list_namespaces(prefix=prefix, limit=1000):
        for item in store.search(ns, limit=1000, refresh_ttl=False):
            store.delete(item.namespace, item.key)
