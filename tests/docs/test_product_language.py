"""The project's text speaks of the product only: no references to the issue tracker and no work-log language.

Scanned: the README, CHANGELOG, every docs page, bench/README.md, and the sources, examples and benchmark scripts
(their docstrings and comments are part of what users read). Offences: a tracker reference (``issue #7``,
``(#12)``) and work-log phrases (``this branch``, ``this session``, ``last session``, ``the brief``). References to
other projects' issues (``owner/name issue 1966``) are sources of a rule, not tracker references, and have no
``#``. Tests are not scanned (their names and notes are for maintainers).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = ("README.md", "CHANGELOG.md", "bench/README.md")
TREES = (("docs", "*.md"), ("plugin", "*.py"), ("integrations", "*.py"), ("examples", "*.py"), ("bench", "*.py"))

_OFFENCE = re.compile(
    r"\bissue #\d+|\(#\d+\)|\bthis branch\b|\bthis session\b|\blast session\b|\bthe brief\b|\bsession note\b",
    re.I,
)


def _scanned() -> list[Path]:
    paths = [ROOT / name for name in FILES if (ROOT / name).is_file()]
    for top, pattern in TREES:
        paths.extend(p for p in sorted((ROOT / top).rglob(pattern)) if "__pycache__" not in p.parts)
    return paths


def test_the_scan_covers_the_project_text() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in _scanned()}
    assert {"README.md", "bench/README.md", "docs/replay.md", "plugin/__init__.py", "bench/replay_scale.py"} <= names


def test_no_tracker_references_or_work_log_language() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
        for path in _scanned()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _OFFENCE.search(line)
    ]
    assert found == []
