"""A ``--models`` entry's ``ttls`` are checked when the file is read, not mid-run: ``"1h"`` needs a 1-hour write
price (the entry's ``cache_write_1h`` or the shipped table's), and ``"5m"`` must be offered (every placement sends
cache points that name no TTL, which live 5 minutes). The docs' example entry runs as written."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from promptcache._cli import main
from promptcache.replay._model_table import ModelTable, load_overrides

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "data" / "call_logs" / "langsmith_runs.jsonl"
ENTRY = {"family": "claude", "min_tokens": 1024, "cachable": ["system", "messages", "tools"], "input": 3.0,
         "output": 15.0, "cache_write_5m": 3.75, "cache_read": 0.3}  # fmt: skip


def _file(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_one_hour_ttl_without_its_write_price_is_refused_at_load(tmp_path: Path) -> None:
    path = _file(tmp_path, {"my.model-v1": {**ENTRY, "ttls": ["5m", "1h"]}})
    with pytest.raises(ValueError) as caught:
        load_overrides(path)
    assert str(caught.value) == f'{path}: my.model-v1: ttls has "1h" but no cache_write_1h'


def test_a_one_hour_ttl_with_its_write_price_loads() -> None:
    table = ModelTable({"my.model-v1": {**ENTRY, "ttls": ["5m", "1h"], "cache_write_1h": 6.0}}, None)
    assert (table.rules("my.model-v1").ttls_s, table.price("my.model-v1").write(3600)) == ((300, 3600), 6.0)


def test_a_shipped_one_hour_price_serves_an_entry_that_names_the_ttl(tmp_path: Path) -> None:
    path = _file(tmp_path, {"claude-opus-4-6": {"ttls": ["5m", "1h"]}})
    assert load_overrides(path) == {"claude-opus-4-6": {"ttls": ["5m", "1h"]}}


def test_ttls_without_five_minutes_are_refused_at_load(tmp_path: Path) -> None:
    path = _file(tmp_path, {"my.model-v1": {**ENTRY, "ttls": ["1h"], "cache_write_1h": 6.0}})
    with pytest.raises(ValueError) as caught:
        load_overrides(path)
    assert str(caught.value) == (
        f'{path}: my.model-v1: ttls must include "5m" (a cache point that names no TTL lives 5 minutes, and every '
        "placement sends such points), got ['1h']"
    )


def test_the_cli_names_the_file_model_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, {"my.model-v1": {**ENTRY, "ttls": ["5m", "1h"]}})
    code = main(["replay", str(LOG), "--models", str(path), "--model", "my.model-v1", "--no-chart", "--out",
                 str(tmp_path / "out")])  # fmt: skip
    assert (code, capsys.readouterr().err) == (
        2,
        f'promptcache: error: --models: {path}: my.model-v1: ttls has "1h" but no cache_write_1h\n',
    )
    assert not (tmp_path / "out").exists()


def test_the_documented_models_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = (ROOT / "docs" / "replay.md").read_text()
    found = re.search(r"`--models FILE` \(e\.g\. `(\{\"my\.model-v1\".*?\}\})`", docs, re.DOTALL)
    assert found is not None
    path = tmp_path / "m.json"
    path.write_text(found.group(1).replace("\n", " "))
    code = main(["replay", str(LOG), "--models", str(path), "--model", "my.model-v1", "--no-chart", "--out",
                 str(tmp_path / "out")])  # fmt: skip
    report = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert (code, report["model"], report["prices_usd_per_mtok"]["source"]) == (
        0,
        "my.model-v1",
        f"user file {path}",
    )
