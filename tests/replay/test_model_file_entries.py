"""``--models`` entries are taken at their word or refused by name: ``cachable: []`` caches nothing (and the
report says the model takes no cache points, with no sentence about entries expiring); an empty id,
an entry missing prices for a model outside the shipped tables, and an entry whose input-side prices are all 0
are errors naming the entry; a cache read dearer than input is one warning; ``replay.json`` names the entry's cache
points as the docs do (``max_cache_points``, the ``cache-point-limit`` cause)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from promptcache._cli import main
from promptcache.replay._model_table import load_overrides

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "sample_conversations.json"
PRICES = {"family": "claude", "input": 3, "output": 15, "cache_write_5m": 3.75, "cache_read": 0.3}


def _models(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "models.json"
    path.write_text(json.dumps(doc))
    return path


def _replay(tmp_path: Path, models: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["replay", str(SAMPLE), "--models", str(models), "--model", "my.m", "--no-chart", "--out",
                 str(tmp_path / "out")])  # fmt: skip
    return code, capsys.readouterr().err


def test_cachable_empty_caches_nothing_under_every_placement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = _replay(tmp_path, _models(tmp_path, {"my.m": {**PRICES, "cachable": []}}), capsys)
    report = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert code == 0
    rows = {n: (r["cache_read_tokens"], r["cache_write_tokens"]) for n, r in report["strategies"].items()}
    assert rows and all(counts == (0, 0) for counts in rows.values()), rows


def test_a_model_taking_no_cache_points_is_told_once_without_a_ttl_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _models(tmp_path, {"my.m": {**PRICES, "cachable": []}})
    code = main(["replay", str(SAMPLE), "--models", str(path), "--model", "my.m", "--no-chart", "--out",
                 str(tmp_path / "out")])  # fmt: skip
    out = capsys.readouterr().out
    report = json.loads((tmp_path / "out" / "replay.json").read_text())
    sentence = (
        "Leave caching off: my.m takes no cache points (no field may carry one), so no placement caches anything here."
    )
    assert (code, report["decision"]["action"], report["decision"]["sentence"]) == (0, "disable", sentence)
    assert out.count("takes no cache points") == 1
    assert [w for w in ("expire", "1-hour TTL", "cache entries") if w in out] == []


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"": PRICES}, "a model id must not be empty, got ''"),
        ({" ": PRICES}, "a model id must not be empty, got ' '"),
        (
            {"my.m": {"family": "claude", "input": 3}},
            "my.m: not in the shipped price table, so the entry needs input, output, cache_write_5m, cache_read; "
            "missing output, cache_write_5m, cache_read",
        ),
        (
            {"my.m": {**PRICES, "input": 0, "cache_write_5m": 0, "cache_read": 0}},
            "my.m: every input-side price is 0 (input, cache_write_5m, cache_read): each placement would cost $0, "
            "so the replay has nothing to compare; give the model's prices (USD per 1M tokens)",
        ),
    ],
)
def test_bad_entries_are_refused_by_name(
    doc: dict[str, Any], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _models(tmp_path, doc)
    with pytest.raises(ValueError) as err:
        load_overrides(path)
    assert str(err.value) == f"{path}: {message}"
    assert _replay(tmp_path, path, capsys) == (2, f"promptcache: error: --models: {path}: {message}\n")


def test_a_cache_read_dearer_than_input_is_one_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _models(tmp_path, {"my.m": {**PRICES, "cache_read": 30}})
    code, err = _replay(tmp_path, path, capsys)
    assert code == 0
    assert [line for line in err.splitlines() if "cache_read" in line] == [
        f"promptcache: warning: {path}: my.m: cache_read (30 USD per 1M tokens) is more than input (3): a cache read "
        "is billed below the input price by every provider; check the entry"
    ]


def test_replay_json_says_cache_point_not_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _models(tmp_path, {"my.m": {**PRICES, "max_points": 1, "min_tokens": 1024}})
    code = main(["replay", str(SAMPLE), "--models", str(path), "--model", "my.m", "--strategy", "multi-point",
                 "--no-chart", "--out", str(tmp_path / "out")])  # fmt: skip
    capsys.readouterr()
    text = (tmp_path / "out" / "replay.json").read_text()
    report = json.loads(text)
    assert code == 0
    assert report["cache_rules"] == {
        "min_tokens_per_cache_point": 1024,
        "max_cache_points": 1,
        "ttls_s": [300.0],
        "cachable": ["messages", "system", "tools"],
        "lookback_blocks": 20,
    }
    assert [row["cause"] for row in report["miss_causes"]["multi-point"]] == ["first-call", "cache-point-limit"]
    assert "checkpoint" not in text
