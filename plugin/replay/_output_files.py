"""Writing the replay's output files without following what already stands at their names.

``--out`` is a directory the user names; a file already there (``replay.json``) may be a symbolic link to anywhere.
Each output is written to a new temporary file in the same directory and renamed over its name (``os.replace``:
atomic on POSIX, and it replaces a link itself, never the file the link points to), so a reader never sees half a
file and nothing outside ``--out`` is written.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["write_replacing"]


def write_replacing(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Create ``path``'s parents, call ``write(temporary path)``, then rename the temporary file to ``path``.

    Args:
        path: the output file.
        write: writes the whole file at the path it is given.

    Returns:
        ``path`` as a ``Path``.

    Raises:
        OSError: the directory cannot be created or written; the temporary file is removed.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
