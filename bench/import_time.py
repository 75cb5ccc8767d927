"""Import time of ``import promptcache``: the median wall time of N child processes running ``python -c "import
promptcache"`` beside as many running ``python -c pass``, interleaved so that both see the same load.

Usage: ``python bench/import_time.py [N]`` (default 21). Prints both medians and their difference.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def _wall(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    pairs = [(_wall("pass"), _wall("import promptcache")) for _ in range(n)]  # side by side, interleaved
    bare = statistics.median(p for p, _ in pairs)
    ours = statistics.median(q for _, q in pairs)
    print(
        f"median of {n}: python -c pass {bare * 1000:.0f} ms, python -c 'import promptcache' {ours * 1000:.0f} ms, "
        f"difference {(ours - bare) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
