"""Code blocks in docs/ marked ``# docs-example: NAME`` run as written and print what their comments say.

The convention is README.md's (tests/test_readme.py): a ``print(...)  # -> TEXT`` line must print ``TEXT``.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
_BLOCK = re.compile(r"```python\n# docs-example: (?P<name>[\w-]+)\n(?P<code>.*?)```", re.S)
_EXPECT = re.compile(r"print\(.*\)\s+# -> (?P<out>.+)$")


def _examples() -> list[tuple[str, str]]:
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        found += [(f"{page.relative_to(DOCS)}:{m['name']}", m["code"]) for m in _BLOCK.finditer(page.read_text())]
    return found


def test_every_plugin_page_has_a_runnable_example() -> None:
    pages = {name.split(":")[0] for name, _ in _examples()}
    assert pages == {
        "plugins/cache-points.md",
        "plugins/intention-cache.md",
        "plugins/processors.md",
        "plugins/response-cache.md",
        "plugins/typed-memory.md",
    }


@pytest.mark.parametrize("name, code", _examples(), ids=[name for name, _ in _examples()])
def test_docs_example_runs(name: str, code: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"docs/{name}", "exec"), {"__name__": f"docs_{name}"})
    expected = [m["out"].strip() for line in code.splitlines() if (m := _EXPECT.search(line))]
    printed = [line.strip() for line in out.getvalue().splitlines()]
    assert expected, f"{name}: no '# -> ' expectation"
    assert printed == expected
