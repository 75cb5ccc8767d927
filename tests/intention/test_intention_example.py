"""examples/intention_cache.py runs offline and shows the second turn answered from memory."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "intention_cache.py"
EXPECTED = """turn 1: 'What is the weather in Paris today?'
  tool get_weather -> 'Paris: 21 C, sunny'
  answer: It is 21 C and sunny in Paris.
turn 2: "what's the weather like in Paris today"
  tool retrieve_memory -> 'No exact memory. It answers an earlier intention, earlier: \\'What is the weather in Paris today?\\' (similarity 0.81; same meaning; wording: yours adds \\'like\\'). Use it only if that is what is asked now; its result from get_weather({"city":"Paris"}), 0s old:\\nParis: 21 C, sunny'
  answer: Still 21 C and sunny in Paris.
get_weather calls: 1; model calls: 4
bob's lookup: None
"""


@pytest.mark.parametrize("redis", [False, True])
def test_example_runs_offline(redis, request, capsys, monkeypatch):
    argv = [str(EXAMPLE)]
    if redis:
        url = request.getfixturevalue("redis_url")
        monkeypatch.setenv("PROMPTCACHE_PREFIX", request.getfixturevalue("redis_prefix"))
        argv += ["--redis", url]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(EXAMPLE), run_name="__main__")  # in-process: the same code path, no interpreter start-up
    assert capsys.readouterr().out == EXPECTED
