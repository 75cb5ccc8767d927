"""User and log text (an ``--out`` path, a model id from a log or ``--models``) is shown as written: rich markup in
it (``[/b]``, ``[red]``) is escaped in the terminal report, and matplotlib math (``$\\frac{$``) in the chart; a chart
that cannot be drawn leaves no older ``replay.png`` beside the new ``replay.json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import main
from promptcache.replay import _chart

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "sample_conversations.json"
PRICES = {"family": "claude", "input": 3, "output": 15, "cache_write_5m": 3.75, "cache_read": 0.3}


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report wraps to the terminal's width: these tests read whole lines, so the terminal is wide."""
    monkeypatch.setenv("COLUMNS", "400")


@pytest.mark.parametrize("folder", ["[/b]", "[red]x", "[bold]"])
def test_an_out_path_with_markup_is_printed_as_given(
    folder: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / folder
    assert main(["replay", str(SAMPLE), "--no-chart", "--out", str(out)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith(f"wrote {out / 'replay.json'} (")


@pytest.mark.parametrize(
    "model_id", ["my[/]m", "my[red]m", "my$\\frac{$m", "arn:aws:bedrock:us-east-1:[/]:x:inference-profile/p"]
)
def test_a_model_id_with_markup_or_math_is_shown_as_written(
    model_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = tmp_path / "models.json"
    models.write_text(json.dumps({model_id: PRICES}))
    out = tmp_path / "out"
    code = main(["replay", str(SAMPLE), "--models", str(models), "--model", model_id, "--out", str(out)])
    text = capsys.readouterr()
    assert (code, "Traceback" in text.err) == (0, False)
    assert f"promptcache replay — {model_id}: 4 conversations" in text.out
    assert (out / "replay.png").stat().st_size > 0


def test_a_chart_that_fails_removes_the_older_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "replay.png").write_bytes(b"an older chart")

    def broken(result: object, path: object) -> Path:
        raise ValueError("Unknown symbol: \\frac")

    monkeypatch.setattr(_chart, "write_chart", broken)
    assert main(["replay", str(SAMPLE), "--out", str(out)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"promptcache: error: cannot draw the chart ({out / 'replay.json'} is written): Unknown symbol: \\frac"
    )
    assert sorted(p.name for p in out.iterdir()) == ["replay.json"]
