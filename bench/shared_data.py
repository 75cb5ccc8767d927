"""Where the benchmarks find the third-party data they run on (kept outside the project, never copied into it).

The files live in the team's ``shared/data`` folder beside the project checkout (``../shared/data`` from the project
root; any ancestor folder is searched, so a git worktree checked out deeper finds it too), or under the folder named
by ``PROMPTCACHE_DATA``. Their sources and licenses:

- ``tau_bench_gpt-4o-airline.json``: GitHub sierra-research/tau-bench, ``historical_trajectories/gpt-4o-airline.json``
  (MIT, Copyright (c) 2024 Sierra);
- ``bfcl_v4_memory_bundle.json``: GitHub ShishirPatil/gorilla, BFCL v4 memory data (Apache-2.0);
- ``intent/banking77/``: GitHub PolyAI-LDN/task-specific-datasets, ``banking_data/`` (CC-BY-4.0).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["find_data_file"]

_HERE = Path(__file__).resolve()


def find_data_file(name: str, explicit: str | None = None, *, required: bool = True) -> Path | None:
    """The path of data file ``name``: ``explicit`` when given (it must exist), else the first existing candidate
    (module docstring).

    When the file is nowhere: exits the program with a one-line message naming what was tried (``required``; a
    benchmark run by hand, not a library call), else returns ``None``.
    """
    if explicit:
        candidates = [Path(explicit)]
    else:
        candidates = [Path(os.environ["PROMPTCACHE_DATA"]) / name] if os.environ.get("PROMPTCACHE_DATA") else []
        candidates += [parent / "shared" / "data" / name for parent in _HERE.parents]
    for path in candidates:
        if path.exists():
            return path
    if not required:
        return None
    tried = ", ".join(str(c) for c in candidates[:3]) + (", ..." if len(candidates) > 3 else "")
    sys.exit(
        f"{name} not found (tried {tried}); pass --data PATH or set PROMPTCACHE_DATA (sources: bench/shared_data.py)"
    )
