"""``Any`` only where a value is truly unknown: the package's uses of ``typing.Any`` stay within a budget.

Counted like the anchors this project is compared with (httpx, LangGraph's store: 8-10 per 1,000 lines): every
``Any`` name or ``typing.Any`` attribute in the source of ``plugin/`` and ``integrations/`` (imports excluded),
per 1,000 non-blank lines. The budget is a ratchet: lower it when uses are removed, never raise it. What is left
is another package's signature we override (``**kwargs: Any``), redis-py's untyped replies, and values of
arbitrary type the user passes through (a tool's arguments, a pydantic field).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_PER_1000_LINES = 6.0


def _count(path: Path) -> tuple[int, int]:
    source = path.read_text(encoding="utf-8")
    uses = sum(
        1
        for node in ast.walk(ast.parse(source))
        if (isinstance(node, ast.Name) and node.id == "Any") or (isinstance(node, ast.Attribute) and node.attr == "Any")
    )
    return uses, sum(1 for line in source.splitlines() if line.strip())


def test_any_stays_within_its_budget() -> None:
    uses = lines = 0
    for top in ("plugin", "integrations"):
        for path in sorted((ROOT / top).rglob("*.py")):
            n, m = _count(path)
            uses, lines = uses + n, lines + m
    assert lines > 20_000  # the whole package was read
    assert round(1000 * uses / lines, 1) <= MAX_PER_1000_LINES, f"{uses} uses of Any in {lines} lines"


def test_the_count_sees_annotations_and_attributes_but_not_imports(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        "from typing import Any\nimport typing\n\nx: Any = 1\ny: typing.Any = 2\n\n\ndef f(*a: Any) -> None: ...\n"
    )
    assert _count(path) == (3, 5)
