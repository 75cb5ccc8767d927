"""The table's and the chart's titles name what served the traffic: the model where one did, else how many and the
two that served most calls (not the main model alone), in the order the "Models (calls):" line lists them all:
most calls first, ties by name; a third model is named, not counted as "1 other"."""

from __future__ import annotations

import dataclasses
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
    assert (
        models_label(three_models)
        == "3 models (claude-opus-4-6 12 calls, claude-sonnet-4-5-20250929 2, claude-haiku-4-5-20251001 1)"
    )
    console = Console(width=200, record=True)
    render_table(three_models, console)
    text = " ".join(console.export_text().split())
    assert (
        "Models (calls): claude-opus-4-6 (12), claude-sonnet-4-5-20250929 (2), claude-haiku-4-5-20251001 (1)." in text
    )
    assert (
        "promptcache replay — 3 models (claude-opus-4-6 12 calls, claude-sonnet-4-5-20250929 2, claude-haiku-4-5-20251001 1): "
        "8 conversations, 15 requests, 63,003 input tokens" in text
    )
    title = draw_chart(three_models).axes[2].get_title()
    assert " ".join(title.split()) == (
        "3 models (claude-opus-4-6 12 calls, claude-sonnet-4-5-20250929 2, claude-haiku-4-5-20251001 1): 8 conversations, 15 requests"
    )


def test_a_run_of_two_models_names_both() -> None:
    result = run_replay([DATA / "parallel_tools.jsonl"], "claude-opus-4-6", DEFAULT_STRATEGIES)
    # a tie in calls: by name
    assert models_label(result) == "2 models (claude-haiku-4-5-20251001 1 call, claude-opus-4-6 1)"


def test_a_run_of_one_model_is_titled_by_it() -> None:
    result = run_replay([SAMPLE], MODEL, DEFAULT_STRATEGIES)
    assert models_label(result) == MODEL


def _with_models(result: ReplayResult, models: dict[str, int]) -> ReplayResult:
    return dataclasses.replace(result, models=models)


def test_four_models_name_two_and_count_the_others(three_models: ReplayResult) -> None:
    four = _with_models(three_models, {"m-d": 1, "m-c": 5, "m-b": 5, "m-a": 9})
    assert models_label(four) == "4 models (m-a 9 calls, m-b 5, 2 others)"
    console = Console(width=200, record=True)
    render_table(four, console)
    assert "Models (calls): m-a (9), m-b (5), m-c (5), m-d (1)." in console.export_text()
