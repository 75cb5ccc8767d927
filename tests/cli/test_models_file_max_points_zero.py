"""``--models FILE`` with ``max_points: 0`` is refused when the file is loaded, naming the option, the file, the
model and the field (it would refuse every request with a cache checkpoint later, naming neither)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import main


def test_max_points_zero_is_refused_at_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "conv.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]))
    models = tmp_path / "models.json"
    models.write_text('{"my.model-v1": {"max_points": 0}}')
    code = main(["replay", str(path), "--models", str(models), "--out", str(tmp_path / "out"), "--no-chart"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"promptcache: error: --models: {models}: my.model-v1: max_points must be at least 1"), err
    assert err.count("\n") == 1
    assert not (tmp_path / "out").exists()
