"""``promptcache replay ... | head -1``: the reader of the terminal report goes away after its first line. The
output files are still written, and the command ends without a traceback, exit 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "claude_code" / "parallel_tools.jsonl"


def test_a_closed_stdout_still_writes_the_outputs_and_exits_cleanly(tmp_path: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # every write to stdout fails (EPIPE), as after `head -1` has exited
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "promptcache", "replay", str(DATA), "--no-chart", "--out", str(tmp_path / "o")],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads((tmp_path / "o" / "replay.json").read_text())["requests"] == 2
