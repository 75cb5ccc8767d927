"""mkdocs hook: give mkdocstrings (griffe) a source tree named like the import package.

The distribution maps ``plugin/`` to ``promptcache`` and ``integrations/`` to ``promptcache.integrations``
(pyproject.toml, setuptools ``package-dir``). griffe finds packages by folder name, so this builds
``build/mkdocs-src/promptcache/`` out of symlinks to those two folders when mkdocs starts (``on_startup``);
``mkdocs.yml`` lists ``build/mkdocs-src`` in the Python handler's ``paths``. Nothing is copied.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SRC = ROOT / "build" / "mkdocs-src" / "promptcache"


def build_source_tree(root: Path = ROOT, target: Path = SRC) -> Path:
    """Make ``target`` a folder of symlinks: every entry of ``root/plugin`` plus ``integrations``. Returns it."""
    target.mkdir(parents=True, exist_ok=True)
    wanted = {entry.name: entry for entry in (root / "plugin").iterdir() if entry.name != "__pycache__"}
    wanted["integrations"] = root / "integrations"
    for link in target.iterdir():
        if link.name not in wanted or not link.is_symlink() or link.resolve() != wanted[link.name].resolve():
            link.unlink()
    for name, source in wanted.items():
        link = target / name
        if not link.is_symlink():
            os.symlink(os.path.relpath(source, target), link)
    return target


def on_startup(**_: object) -> None:
    """mkdocs event (runs before the configuration's plugins collect anything)."""
    build_source_tree()
