"""The fixes of the model-switch and prefix-change miss causes: staying on one model per conversation is priced by
replaying the same requests on one model (the recovered dollars are exactly what that replay bills less); a
changed prefix recovers 0, with the reason (Claude Code's compaction or its own unlogged prompt: no change the
user makes to the requests recovers it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from shared_data import find_data_file  # noqa: E402

from promptcache.replay._decision import cause_rows  # noqa: E402
from promptcache.replay._engine import DEFAULT_STRATEGIES, ReplayResult, run_replay  # noqa: E402
from promptcache.replay._report import render_table  # noqa: E402

SONNET4 = "anthropic.claude-sonnet-4-20250514-v1:0"
SONNET45 = "anthropic.claude-sonnet-4-5-20250929-v1:0"
HAIKU35 = "anthropic.claude-3-5-haiku-20241022-v1:0"


def _log(path: Path, models: list[str]) -> Path:
    """One timestamped conversation with a long system prompt; reply ``i`` comes from ``models[i]``."""
    messages: list[dict] = [{"role": "system", "content": "policy " * 1500}]
    for i, model in enumerate(models):
        messages += [{"role": "user", "content": f"question {i} " * 30, "timestamp": 20 * i},
                     {"role": "assistant", "content": "answer " * 20, "model": model, "timestamp": 20 * i + 1}]  # fmt: skip
    path.write_text(json.dumps(messages))
    return path


def _rows(result: ReplayResult, name: str) -> dict[str, dict]:
    return {row["cause"]: row for row in cause_rows(result, name)}


def _bill(result: ReplayResult, name: str) -> float:
    row = result.strategies[name]
    return row.cost_usd + row.output_cost_usd


@pytest.mark.parametrize("second", [SONNET45, HAIKU35])
def test_one_model_per_conversation_recovers_what_its_replay_bills_less(tmp_path: Path, second: str) -> None:
    switched = run_replay([_log(tmp_path / "switch.json", [SONNET4, second, SONNET4])], SONNET4, ["anchored-tail"])
    one = run_replay([_log(tmp_path / "one.json", [SONNET4] * 3)], SONNET4, ["anchored-tail"])
    rows = _rows(switched, "anchored-tail")
    assert rows["model-switch"]["cache_write_tokens"] > 1500
    variant = switched.variants["anchored-tail+one-model"]
    # the variant is the one-model replay itself: same tokens, same bill (input and output side)
    assert (variant.read_tokens, variant.write_tokens, variant.input_tokens) == (
        one.strategies["anchored-tail"].read_tokens,
        one.strategies["anchored-tail"].write_tokens,
        one.strategies["anchored-tail"].input_tokens,
    )
    saved = _bill(switched, "anchored-tail") - _bill(one, "anchored-tail")
    assert rows["model-switch"]["recoverable_usd"] == round(saved, 6)
    assert rows["model-switch"]["fix"].startswith("stay on one model within a conversation")
    if second == SONNET45:  # same prices: the saving is the re-written prefix, written and then read instead
        assert saved > 0


def test_a_log_without_a_switch_has_no_one_model_variant(tmp_path: Path) -> None:
    result = run_replay([_log(tmp_path / "one.json", [SONNET4] * 3)], SONNET4, ["anchored-tail"])
    assert not [name for name in result.variants if name.endswith("+one-model")]
    assert "model-switch" not in _rows(result, "anchored-tail")


def test_a_changed_prefix_recovers_nothing_and_says_why() -> None:
    folder = find_data_file("claude_code/258c7280-ae70-4798-800f-63464d01a85d", required=False)
    if folder is None:
        pytest.skip("shared data claude_code/258c7280-ae70-4798-800f-63464d01a85d not present")
    result = run_replay([folder], SONNET4, DEFAULT_STRATEGIES)
    changed = _rows(result, "as-logged")["prefix-changed"]
    assert changed["cache_write_tokens"] > 0 and changed["recoverable_usd"] == 0.0
    assert changed["fix"].startswith("none you control: a compaction replaces the history with its summary")
    console = Console(width=400, record=True)
    render_table(result, console)
    line = next(ln for ln in console.export_text().splitlines() if "prefix-changed" in ln)
    assert line.rstrip().rstrip("│").rstrip().endswith("0.0000")
