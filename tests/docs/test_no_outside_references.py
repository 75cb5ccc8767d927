"""No text in the project refers to files outside it (a clone has none of them).

Every source, test, example, benchmark, CI and documentation file is scanned for citations of a design document
or of "seed" documents kept beside the project, and for paths into the folder beside the checkout. The only
files allowed to name that folder are the two that look benchmark data up at run time (``bench/shared_data.py``,
``bench/fetch_data.py``) and the page that documents the lookup (docs/data.md): a data location, not a citation.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("plugin", "integrations", "tests", "examples", "bench", "docs", ".ci")
TOP_FILES = ("README.md", "pyproject.toml", "mkdocs.yml", "mkdocs_hooks.py")
SKIPPED_DIRS = {"__pycache__", "venv", ".venv", "site", "out"}
SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".txt", ".cfg", ".ini", ".json", ".jsonl", ""}
DATA_LOOKUP = {"bench/shared_data.py", "bench/fetch_data.py", "docs/data.md"}

_CITATION = re.compile(r"DESIGN\.md|\bthe seed\b|\bseed's\b|\bseed doc|\bseeds?/|\bseed ``0", re.I)
_OUTSIDE_PATH = re.compile(r"\.\./shared\b|\bshared/(data|seeds)\b")


def _files() -> list[Path]:
    found = [ROOT / name for name in TOP_FILES if (ROOT / name).is_file()]
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            rel = path.relative_to(ROOT)
            if path.is_file() and path.suffix in SUFFIXES and not SKIPPED_DIRS & set(rel.parts[:-1]):
                found.append(path)
    return found


def _offences(path: Path) -> list[str]:
    rel = path.relative_to(ROOT).as_posix()
    if rel == "tests/docs/test_no_outside_references.py":
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return []
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if _CITATION.search(line) or (rel not in DATA_LOOKUP and _OUTSIDE_PATH.search(line)):
            found.append(f"{rel}:{number}: {line.strip()[:120]}")
    return found


def test_scan_covers_the_tree() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in _files()}
    assert {"README.md", "plugin/cache_points/_multi_point.py", ".ci/run", "docs/architecture.md"} <= names
    assert not any(name.startswith(".ci/venv/") for name in names)


def test_the_patterns_catch_citations() -> None:
    assert _CITATION.search("as DESIGN.md says")
    assert _CITATION.search("the seed's five examples")
    assert _CITATION.search("see the seed document ``004_*``")
    assert _OUTSIDE_PATH.search("--data ../shared/data/x.json")
    assert not _CITATION.search("random.Random(seed)") and not _CITATION.search("bind(seed=2**70)")


def test_no_text_refers_to_files_outside_the_project() -> None:
    offences = [line for path in _files() for line in _offences(path)]
    assert offences == []
