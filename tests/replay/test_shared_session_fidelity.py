"""Fidelity on the shared Claude Code sessions (when the shared data is present beside the checkout): the simulated
as-logged bill within 5 % of the logged one, >= 95 % of calls within 5 % on cache-read and on cache-write tokens,
and the default strategy never more expensive than the session's own layout. Skipped without the data."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from shared_data import find_data_file  # noqa: E402

from promptcache.replay._engine import run_replay  # noqa: E402

SESSIONS = ("258c7280-ae70-4798-800f-63464d01a85d", "ae4a77f8-aedd-4bc1-888f-c94edc91af04")


def _path(name: str) -> Path:
    path = find_data_file(f"claude_code/{name}", required=False)
    if path is None:
        pytest.skip("shared Claude Code sessions not present")
    return path


@pytest.mark.parametrize("name", [f"{s}.jsonl" for s in SESSIONS] + list(SESSIONS))
def test_as_logged_matches_the_logged_bill(name: str) -> None:
    result = run_replay([_path(name)], "anthropic.claude-sonnet-4-20250514-v1:0", ["none", "anchored-tail"])
    fid = result.fidelity
    assert fid is not None and fid.calls == result.requests == result.logged_requests
    assert fid.cost_difference is not None and abs(fid.cost_difference) <= 0.05
    assert fid.read_within / fid.calls >= 0.95 and fid.write_within / fid.calls >= 0.95
    assert result.strategies["anchored-tail"].cost_usd <= result.strategies["as-logged"].cost_usd * (1 + 1e-9)
