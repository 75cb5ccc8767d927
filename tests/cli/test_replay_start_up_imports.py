"""What ``promptcache replay`` has imported when it first opens its input: none of LangChain, LangGraph,
pydantic, tiktoken, rich, matplotlib, numpy or the intention cache (they load when first used), so reading starts
at once; ``--help`` and a refused input (a named pipe) load none of them either."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("langchain", "langchain_core", "langgraph", "langsmith", "pydantic", "tiktoken", "rich", "matplotlib", "numpy")
HEAVY_OURS = ("promptcache.intention", "promptcache.response_cache", "promptcache.memory")

_PROBE = """
import os, sys
target = os.path.abspath(sys.argv[1])
heavy = sys.argv[2].split(",")

def loaded():
    return sorted({m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy)})

def hook(event, args):
    if event == "open" and isinstance(args[0], str) and os.path.abspath(args[0]) == target:
        print("AT-OPEN", ",".join(loaded()), flush=True)
        os._exit(0)

sys.addaudithook(hook)
from promptcache._cli import main
code = main(sys.argv[3:])
print("AT-EXIT", ",".join(loaded()), flush=True)
sys.exit(code)
"""


def _probe(target: Path | str, *argv: str) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(target), ",".join(HEAVY + HEAVY_OURS), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("AT-")]
    return proc.returncode, line


def test_nothing_heavy_is_loaded_when_the_input_is_first_opened(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('[{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}]')
    code, line = _probe(path, "replay", str(path), "--no-chart", "--out", str(tmp_path / "out"))
    assert (code, line) == (0, "AT-OPEN ")


def test_a_named_pipe_is_refused_before_anything_heavy_is_loaded(tmp_path: Path) -> None:
    fifo = tmp_path / "calls.jsonl"
    os.mkfifo(fifo)
    code, line = _probe(fifo, "replay", str(fifo), "--no-chart", "--out", str(tmp_path / "out"))
    assert (code, line) == (2, "AT-EXIT ")
