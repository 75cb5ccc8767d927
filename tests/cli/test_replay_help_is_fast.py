"""``promptcache replay --help`` and an argument error load none of the replay's placement code, the ResponseCache
or LangChain; the names and defaults the help prints are the ones the replay uses."""

from __future__ import annotations

import subprocess
import sys

from promptcache._cli_parser import GAP_DEFAULT_S, RESPONSE_CACHE_TTL_DEFAULT_S, STRATEGY_NAMES

_PROBE = """
import sys
from promptcache._cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = ("promptcache.replay._registry", "promptcache.replay._engine", "promptcache.replay._ours",
         "promptcache.response_cache", "langchain_core", "langchain_aws")
print(",".join(sorted(m for m in sys.modules if m in heavy)))
"""


def _loaded(*argv: str) -> tuple[str, str]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    return proc.stdout.splitlines()[-1], proc.stdout


def test_help_loads_no_placement_code() -> None:
    loaded, out = _loaded("replay", "--help")
    assert loaded == ""
    text = " ".join(out.split())
    assert f"among {', '.join(STRATEGY_NAMES)};" in text
    assert "(default 10)" in text and "ResponseCache default, 300 s)" in text


def test_an_argument_error_loads_no_placement_code() -> None:
    assert _loaded("replay", "x.json", "--gap-s", "soon")[0] == ""


def test_the_help_values_are_the_replays_own() -> None:
    from promptcache.replay._engine import DEFAULT_GAP_S
    from promptcache.replay._registry import STRATEGIES
    from promptcache.response_cache import DEFAULT_RESPONSE_CACHE_TTL_SECONDS

    assert STRATEGY_NAMES == tuple(STRATEGIES)
    assert GAP_DEFAULT_S == DEFAULT_GAP_S
    assert RESPONSE_CACHE_TTL_DEFAULT_S == DEFAULT_RESPONSE_CACHE_TTL_SECONDS
