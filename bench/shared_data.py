"""Where the benchmarks find the third-party data they run on (kept outside the project, never copied into it).

Folders searched, in order (`data_dirs`): the folder named by ``PROMPTCACHE_DATA``; the team's ``shared/data``
folder beside the project checkout (``../shared/data`` from the project root; any ancestor folder is searched, so a
git worktree checked out deeper finds it too); the download cache that ``python bench/fetch_data.py`` fills
(`cache_dir`). Sources, pinned commits, checksums and licenses: ``bench/fetch_data.py`` and docs/data.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["cache_dir", "data_dirs", "find_data_file"]

_HERE = Path(__file__).resolve()


def cache_dir() -> Path:
    """The download cache: ``PROMPTCACHE_DATA_CACHE``, else ``$XDG_CACHE_HOME/promptcache/data``, else
    ``~/.cache/promptcache/data`` (it need not exist)."""
    if os.environ.get("PROMPTCACHE_DATA_CACHE"):
        return Path(os.environ["PROMPTCACHE_DATA_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "promptcache" / "data"


def data_dirs() -> list[Path]:
    """The folders searched for data files, in order (module docstring)."""
    folders = [Path(os.environ["PROMPTCACHE_DATA"])] if os.environ.get("PROMPTCACHE_DATA") else []
    folders += [parent / "shared" / "data" for parent in _HERE.parents]
    return [*folders, cache_dir()]


def find_data_file(name: str, explicit: str | None = None, *, required: bool = True) -> Path | None:
    """The path of data file ``name``: ``explicit`` when given (it must exist), else the first existing candidate
    in `data_dirs`.

    When the file is nowhere: exits the program with a one-line message naming what was tried (``required``; a
    benchmark run by hand, not a library call), else returns ``None``.
    """
    if explicit:
        candidates = [Path(explicit)]
    else:
        candidates = [folder / name for folder in data_dirs()]
    for path in candidates:
        if path.exists():
            return path
    if not required:
        return None
    tried = ", ".join(str(c) for c in candidates[:3]) + (", ..." if len(candidates) > 3 else "")
    sys.exit(
        f"{name} not found (tried {tried}); pass --data PATH or set PROMPTCACHE_DATA, or fetch it: python bench/fetch_data.py"
    )
