"""The in-memory backend's index by exact key: an exact lookup reads only the memories of its exact intention (and
tool call), never the whole group of memories with its meaning signature; the group is read only when the exact
index misses and a similar match is asked for. The answers are those of the same backend without the index."""

from __future__ import annotations

import asyncio
from typing import Any

from promptcache.intention import IntentionMemory
from promptcache.intention._backends import MemoryRecord
from promptcache.intention._memory_backend import InMemoryIntentionBackend


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


class Counting(InMemoryIntentionBackend):
    """Counts the reads of a whole group (the meaning index, or every memory)."""

    def __init__(self) -> None:
        super().__init__()
        self.group_reads = 0

    def matching_indexed(self, user: str, signature: str, now: float) -> Any:
        self.group_reads += 1
        return super().matching_indexed(user, signature, now)

    def records(self, user: str, now: float) -> list[MemoryRecord]:
        self.group_reads += 1
        return super().records(user, now)


class Unindexed(InMemoryIntentionBackend):
    """The same backend answering every lookup from the group (the default `exact_matching`: not known)."""

    def exact_matching(self, *args: Any) -> None:
        return None

    async def aexact_matching(self, *args: Any) -> None:
        return None


def filled(backend: InMemoryIntentionBackend, clock: Clock, calls: int = 50) -> IntentionMemory:
    """One intention with ``calls`` tool calls stored 10 s apart, a second wording of it, and another intention."""
    memory = IntentionMemory(backend, ttl_s=1000, clock=clock)
    for k in range(calls):
        memory.store("u", "Fix the failing tests", f"contents {k}", tool="Read", args={"file": f"f{k}.py"})
        clock.now += 10
    memory.store("u", "fix the failing tests!", "again", tool="Read", args={"file": "f3.py"})  # same exact key
    memory.store("u", "Deploy the service", "deployed", tool="Bash", args={"cmd": "deploy"})
    return memory


def answers(memory: IntentionMemory) -> list[Any]:
    out: list[Any] = []
    for tool, args in ((None, None), ("Read", {"file": "f3.py"}), ("Read", {"file": "f9.py"}), ("Read", {"x": 1})):
        for exact_only in (True, False):
            found = memory.retrieve_all("u", "fix the failing tests.", tool=tool, args=args, exact_only=exact_only)
            out.append([(m.kind, m.result, m.memory_id, m.similarity) for m in found])
    return out


def test_exact_lookups_do_not_read_the_group_and_answer_as_without_the_index() -> None:
    clock, plain_clock = Clock(), Clock()
    backend = Counting()
    memory, plain = filled(backend, clock), filled(Unindexed(), plain_clock)
    backend.group_reads = 0
    got = answers(memory)
    assert got == answers(plain)
    # the whole intention (all 50 tool calls), newest first: the second wording replaced f3.py's memory
    assert [r for _, r, _, _ in got[0]][:3] == ["again", "contents 49", "contents 48"] and len(got[0]) == 50
    assert [r for _, r, _, _ in got[2]] == ["again"] and [r for _, r, _, _ in got[4]] == ["contents 9"]
    assert got[6] == []  # no memory of that call: exact_only answers from the index
    # exact hits (6) and the exact-only miss answer from the index; only the miss open to a similar match reads
    assert backend.group_reads == 1


def test_the_index_follows_expiry_replacement_and_new_memories() -> None:
    clock, plain_clock = Clock(), Clock()
    memory, plain = filled(Counting(), clock), filled(Unindexed(), plain_clock)
    assert answers(memory) == answers(plain)  # the index is built here, then kept up to date
    for m, c in ((memory, clock), (plain, plain_clock)):
        c.now += 655  # the memories of f0.py to f15.py have expired, but f3.py's was stored again
        m.store("u", "Fix the failing tests", "contents 20 again", tool="Read", args={"file": "f20.py"})
        m.store("u", "Fix the failing tests", "new", tool="Grep", args={"pattern": "def"})
    got = answers(memory)
    assert got == answers(plain)
    assert len(got[0]) == 36 and {r for _, r, _, _ in got[0][:2]} == {"new", "contents 20 again"}
    assert [r for _, r, _, _ in got[2]] == ["again"] and [r for _, r, _, _ in got[4]] == []


def test_the_async_lookup_uses_the_index_too() -> None:
    clock = Clock()
    backend = Counting()
    memory = filled(backend, clock)
    backend.group_reads = 0
    found = asyncio.run(memory.aretrieve("u", "Fix the failing tests", tool="Read", args={"file": "f9.py"}))
    assert found is not None and found.result == "contents 9" and backend.group_reads == 0
