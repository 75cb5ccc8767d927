"""examples/all_plugins_agent.py runs offline: one memory-block change in the conversation, a ResponseCache hit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_example_prints_the_turns_and_one_block_change():
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "all_plugins_agent.py")],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert lines[:7] == [
        "dana-1 'is 97 prime?': conceptual=True, model calls=1",
        "dana-1 'what does retry.py do on a 429?': conceptual=False, model calls=2",
        "dana-1 'when did WWII end?': conceptual=True, model calls=1",
        "dana-1 'fix it': conceptual=False, model calls=1",
        'dana-1 "what\'s blocking release 2.3?": conceptual=False, model calls=1',
        "dana-2 'is 97 prime?': conceptual=True, model calls=0",
        "requests sent: 6; distinct memory blocks: 2",
    ]
    assert lines[-1] == "input cost $0.0097, cache-read share 82.6%"
