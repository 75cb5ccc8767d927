"""The ResponseCache example runs offline and prints hit/miss per model call."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "response_cache_agent.py"
EXPECTED = """\
first call (model runs)
  step 0: miss  billed tokens: 16
  step 1: miss  billed tokens: 24
  -> Paris has about 2.1 million people.
same question again (from the cache)
  step 0: hit   billed tokens: 0
  step 1: hit   billed tokens: 0
  -> Paris has about 2.1 million people.
bust=True (model runs, entry refreshed)
  step 0: bust  billed tokens: 18
  -> Paris (fresh).
another user (own scope)
  step 0: miss  billed tokens: 11
  -> Bonjour!
model calls: 4
"""


@pytest.mark.parametrize("backend", ["memory", "redis"])
def test_example_runs_offline(backend: str, request: pytest.FixtureRequest) -> None:
    args = [sys.executable, str(EXAMPLE)]
    if backend == "redis":
        args += ["--redis", request.getfixturevalue("redis_url")]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXPECTED
