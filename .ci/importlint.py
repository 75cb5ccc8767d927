"""Check the package's import layers with import-linter (contracts in ``pyproject.toml``, ``[tool.importlinter]``).

``plugin/`` is ``promptcache`` and ``integrations/`` is ``promptcache.integrations`` (setuptools ``package-dir``), a
layout import-linter cannot map by itself: this builds a tree of symlinks with the import names in a temporary
folder (as ``.ci/typecheck.py`` does) and runs ``lint-imports`` on it. Usage: ``python .ci/importlint.py``; the exit
code is lint-imports'.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from source_tree import build  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="promptcache-imports-") as tmp:
        build(tmp)
        env = {**os.environ, "PYTHONPATH": tmp}
        lint = Path(sys.executable).with_name("lint-imports")
        command = [str(lint), "--config", str(ROOT / "pyproject.toml"), "--no-cache"]
        return subprocess.run([*command, *sys.argv[1:]], cwd=tmp, env=env).returncode


if __name__ == "__main__":
    raise SystemExit(main())
