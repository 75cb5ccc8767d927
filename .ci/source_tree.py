"""The package as its import names see it: ``plugin/`` is ``promptcache``, ``integrations/`` is
``promptcache.integrations`` (setuptools ``package-dir``), a layout mypy and import-linter cannot map by themselves.
`build` makes a tree of symlinks with the import names in a folder; ``.ci/typecheck.py`` and ``.ci/importlint.py``
run their tool on it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build(folder: str | Path) -> Path:
    """Create ``folder/promptcache`` (links to every entry of ``plugin/`` plus ``integrations``); returns it."""
    package = Path(folder) / "promptcache"
    package.mkdir()
    for entry in sorted((ROOT / "plugin").iterdir()):
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    (package / "integrations").symlink_to(ROOT / "integrations")
    return package
