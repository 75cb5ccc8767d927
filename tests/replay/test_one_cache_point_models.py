"""A model that allows one cache point per request (``max_points: 1`` in ``--models FILE``): every strategy that
reads the limit keeps to it, and langchain-aws, whose placement does not read it, is reported unavailable with the
reason instead of stopping the run."""

from __future__ import annotations

import json
from pathlib import Path

from promptcache._cli import main

_LOG = Path(__file__).parents[1] / "data" / "call_logs" / "anthropic_batch.jsonl"
_ONE_POINT_MODEL = {
    "family": "claude",
    "min_tokens": 1024,
    "max_points": 1,
    "ttls": ["5m", "1h"],
    "cachable": ["system", "messages", "tools"],
    "input": 3.0,
    "output": 15.0,
    "cache_write_5m": 3.75,
    "cache_write_1h": 6.0,
    "cache_read": 0.3,
}


def _replay(tmp_path: Path, *strategies: str) -> dict[str, object]:
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"my.one-point": _ONE_POINT_MODEL}))
    flags = [arg for name in strategies for arg in ("--strategy", name)]
    out = tmp_path / "out"
    argv = ["replay", str(_LOG), "--model", "my.one-point", "--models", str(models), *flags, "--out", str(out)]
    assert main([*argv, "--no-chart"]) == 0
    report: dict[str, object] = json.loads((out / "replay.json").read_text())
    return report


def test_langchain_aws_is_unavailable_for_a_one_point_model_and_the_run_goes_on(tmp_path: Path) -> None:
    strategies = _replay(tmp_path)["strategies"]
    assert isinstance(strategies, dict)
    assert strategies["langchain-aws"]["unavailable"] == (
        "langchain-aws places up to 4 cache points per request whatever the model; my.one-point allows 1, "
        "so its requests would be refused"
    )
    assert strategies["last-message"]["unavailable"] is None
    assert strategies["multi-point"]["unavailable"] is None


def test_hindsight_keeps_one_point_the_tail_for_a_one_point_model(tmp_path: Path) -> None:
    strategies = _replay(tmp_path, "hindsight", "last-message")["strategies"]
    assert isinstance(strategies, dict)
    assert strategies["hindsight"]["unavailable"] is None
    assert strategies["hindsight"]["cost_usd"] == strategies["last-message"]["cost_usd"]
