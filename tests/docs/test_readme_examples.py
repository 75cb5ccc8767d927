"""README code blocks marked ``# readme-example: NAME`` run as written and print what their comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
_BLOCK = re.compile(r"```python\n# readme-example: (?P<name>[\w-]+)\n(?P<code>.*?)```", re.S)
_EXPECT = re.compile(r"print\(.*\)\s+# -> (?P<out>.+)$")


def _examples() -> list[tuple[str, str]]:
    return [(m["name"], m["code"]) for m in _BLOCK.finditer(README.read_text())]


def test_readme_has_examples() -> None:
    assert {"processors", "response-cache", "cache-points", "typed-memory", "intention-cache"} <= {
        name for name, _ in _examples()
    }


@pytest.mark.parametrize("name, code", _examples(), ids=[name for name, _ in _examples()])
def test_readme_example_runs(name: str, code: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README.md:{name}", "exec"), {"__name__": f"readme_{name}"})
    expected = [m["out"].strip() for line in code.splitlines() if (m := _EXPECT.search(line))]
    printed = [line.strip() for line in out.getvalue().splitlines()]
    assert printed == expected
