"""The table's and the chart's titles name what served the traffic: the model where one did, else how many and the
two that served most calls (not the main model alone)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from promptcache.replay._chart import draw_chart
from promptcache.replay._engine import DEFAULT_STRATEGIES, ReplayResult, run_replay
from promptcache.replay._report import render_table
from promptcache.replay._result_rows import models_label

DATA = Path(__file__).resolve().parents[1] / "data" / "claude_code"
SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "sample_conversations.json"
MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"


@pytest.fixture(scope="module")
def three_models() -> ReplayResult:
    return run_replay([DATA], "claude-opus-4-6", DEFAULT_STRATEGIES)


def test_a_run_of_three_models_is_titled_by_the_mix(three_models: ReplayResult) -> None:
    # calls: claude-opus-4-6 12, claude-sonnet-4-5-20250929 2, claude-haiku-4-5-20251001 1
    assert models_label(three_models) == "3 models (claude-opus-4-6 12 calls, claude-sonnet-4-5-20250929 2, 1 other)"
    console = Console(width=200, record=True)
    render_table(three_models, console)
    assert (
        "promptcache replay — 3 models (claude-opus-4-6 12 calls, claude-sonnet-4-5-20250929 2, 1 other): "
        "8 conversations, 15 requests, 63,003 input tokens" in " ".join(console.export_text().split())
    )
    title = draw_chart(three_models).axes[2].get_title()
    assert " ".join(title.split()) == (
        "3 models (claude-opus-4-6 12 calls, claude-sonnet-4-5-20250929 2, 1 other): 8 conversations, 15 requests"
    )


def test_a_run_of_two_models_names_both() -> None:
    result = run_replay([DATA / "parallel_tools.jsonl"], "claude-opus-4-6", DEFAULT_STRATEGIES)
    assert models_label(result) == "2 models (claude-opus-4-6 1 call, claude-haiku-4-5-20251001 1)"


def test_a_run_of_one_model_is_titled_by_it() -> None:
    result = run_replay([SAMPLE], MODEL, DEFAULT_STRATEGIES)
    assert models_label(result) == MODEL
