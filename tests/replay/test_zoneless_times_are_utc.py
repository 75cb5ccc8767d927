"""A time written without a zone is read as UTC, whatever the machine's local zone: the same log gives the same
report on any machine (LangSmith, Langfuse and OTLP exports write UTC)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from promptcache.replay._engine import DEFAULT_STRATEGIES, run_replay
from promptcache.replay._messages import parse_timestamp

DATA = Path(__file__).resolve().parents[1] / "data" / "call_logs"
SONNET4 = "anthropic.claude-sonnet-4-20250514-v1:0"


@pytest.fixture
def local_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """Set the process's local zone by name; the original zone is restored after the test."""

    def use(zone: str) -> None:
        monkeypatch.setenv("TZ", zone)
        time.tzset()

    yield use
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles", "Asia/Kolkata"])
def test_a_zoneless_time_is_utc_in_any_local_zone(local_zone: Callable[[str], None], zone: str) -> None:
    local_zone(zone)
    assert parse_timestamp("2026-03-02T10:00:01.000000") == 1772445601.0
    assert parse_timestamp("2026-03-02T10:00:01Z") == 1772445601.0
    assert parse_timestamp("2026-03-02T11:00:01+01:00") == 1772445601.0


def test_a_log_mixing_zoneless_and_utc_times_replays_the_same_anywhere(local_zone: Callable[[str], None]) -> None:
    results = []
    for zone in ("UTC", "America/Los_Angeles"):
        local_zone(zone)
        result = run_replay([DATA / "langsmith_runs.jsonl"], SONNET4, DEFAULT_STRATEGIES)
        results.append((result.span_s, {name: round(totals.cost_usd, 6) for name, totals in result.strategies.items()}))
    assert results[0] == results[1]
    span_s, costs = results[0]
    assert span_s == 3599.0  # 10:00:01 (no zone) to 11:00:00Z
    assert (costs["none"], costs["anchored-tail"], costs["as-logged"]) == (0.008158, 0.005653, 0.005898)
