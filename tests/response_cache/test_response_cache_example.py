"""The ResponseCache example runs offline and prints hit/miss per model call."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "response_cache_agent.py"
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
def test_example_runs_offline(
    backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run as ``python examples/response_cache_agent.py`` would (in-process, to keep the suite fast)."""
    argv = [str(EXAMPLE)]
    if backend == "redis":
        argv += ["--redis", request.getfixturevalue("redis_url")]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    assert capsys.readouterr().out == EXPECTED
