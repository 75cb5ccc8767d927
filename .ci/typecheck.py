"""Type-check the package as its import names see it: ``plugin/`` is ``promptcache``, ``integrations/`` is
``promptcache.integrations`` (setuptools ``package-dir``), a layout mypy cannot map by itself.

Builds a tree of symlinks with the import names in a temporary folder and runs mypy on it with the settings in
``pyproject.toml`` (``[tool.mypy]``). mypy's messages name the files as they are in the repository
(``plugin/_keys.py``, ``integrations/redis.py``), so an editor or a terminal can open them.

Usage: ``python .ci/typecheck.py [extra mypy args]``; the exit code is mypy's.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from source_tree import build  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# The import path of a file in mypy's messages -> its path in the repository (longest prefix first).
_SOURCES = (("promptcache/integrations/", "integrations/"), ("promptcache/", "plugin/"))
_LOCATION = re.compile(r"^(promptcache/\S*?\.pyi?)(?=:)", re.MULTILINE)


def _repository_path(match: re.Match[str]) -> str:
    path = match.group(1)
    for imported, source in _SOURCES:
        if path.startswith(imported):
            return source + path[len(imported) :]
    return path


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="promptcache-mypy-") as tmp:
        build(tmp)
        command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "-p", "promptcache"]
        done = subprocess.run([*command, *sys.argv[1:]], cwd=tmp, capture_output=True, text=True)
    sys.stdout.write(_LOCATION.sub(_repository_path, done.stdout))
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
