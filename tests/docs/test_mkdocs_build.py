"""The documentation site builds with ``mkdocs build --strict`` (no warning at all), offline.

Needs the ``docs`` extra (mkdocs-material, mkdocstrings); without it these tests skip, and with ``CI=true`` they
fail (CI installs it).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_HAVE_DOCS = all(importlib.util.find_spec(m) for m in ("mkdocs", "material", "mkdocstrings_handlers"))

pytestmark = pytest.mark.skipif(
    not _HAVE_DOCS and os.environ.get("CI") != "true", reason='needs the docs extra: pip install -e ".[docs]"'
)


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_site_builds_strict_with_api_reference(tmp_path: Path) -> None:
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr
    api = (tmp_path / "site" / "api" / "response-cache" / "index.html").read_text()
    # the reference is generated from the docstrings: the class and its hooks have anchors
    assert 'id="promptcache.response_cache.ResponseCache"' in api
    assert 'id="promptcache.response_cache.ResponseCache.process_request"' in api
    for page in ("getting-started", "architecture", "replay", "data", "plugins/cache-points"):
        assert (tmp_path / "site" / page / "index.html").is_file(), page
    # docstrings use one style that renders: no Sphinx role (":class:`X`") is left as raw text on any page
    role = re.compile(r":(?:py:)?(?:class|func|mod|meth|attr|data|exc|obj|const):(?:<code>|`)")
    raw = {
        str(html.relative_to(tmp_path / "site")): len(role.findall(html.read_text(encoding="utf-8")))
        for html in (tmp_path / "site").rglob("*.html")
    }
    assert {page: n for page, n in raw.items() if n} == {}


def test_strict_build_fails_on_a_broken_link(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the missing page](missing.md).\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: t\ndocs_dir: docs\n")
    done = _build(config, tmp_path / "site")
    assert done.returncode == 1
    assert "missing.md" in done.stderr
