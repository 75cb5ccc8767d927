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

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="promptcache-imports-") as tmp:
        package = Path(tmp) / "promptcache"
        package.mkdir()
        for entry in sorted((ROOT / "plugin").iterdir()):
            if entry.name != "__pycache__":
                (package / entry.name).symlink_to(entry)
        (package / "integrations").symlink_to(ROOT / "integrations")
        env = {**os.environ, "PYTHONPATH": tmp}
        lint = Path(sys.executable).with_name("lint-imports")
        command = [str(lint), "--config", str(ROOT / "pyproject.toml"), "--no-cache"]
        return subprocess.run([*command, *sys.argv[1:]], cwd=tmp, env=env).returncode


if __name__ == "__main__":
    raise SystemExit(main())
