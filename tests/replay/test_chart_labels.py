"""The chart's decision panel reads at a 1% difference: every bar carries its figure to 0.1%, no figure lies on a
row's name or on another figure, the whole decision sentence is the title (dollar signs as text, not formulas),
and the miss-cause legend sits beside the bars."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from promptcache.replay._chart import bar_specs, draw_chart
from promptcache.replay._decision import decide
from promptcache.replay._engine import DEFAULT_STRATEGIES, ReplayResult, run_replay

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "sample_conversations.json"
MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"


@pytest.fixture(scope="module")
def sample() -> ReplayResult:
    return run_replay([str(SAMPLE)], MODEL, DEFAULT_STRATEGIES, gap_s=30.0)


def _boxes(fig: Any, texts: list[Any]) -> list[Any]:
    renderer = fig.canvas.get_renderer()
    return [t.get_window_extent(renderer) for t in texts if t.get_text()]


def test_figures_lie_on_no_name_and_no_other_figure(sample: ReplayResult) -> None:
    fig = draw_chart(sample)
    bars_ax = fig.axes[0]
    figures = _boxes(fig, list(bars_ax.texts))
    names = _boxes(fig, list(bars_ax.get_yticklabels()))
    specs = bar_specs(sample)
    assert len(figures) == len(specs) == len(names)
    # each figure the row's share of no caching to 0.1%, as the table's "vs none" column
    assert [t.get_text() for t in bars_ax.texts] == [f"{s['share_pct']:.1f}%" for s in specs]
    for i, box in enumerate(figures):
        assert not any(box.overlaps(name) for name in names)
        assert not any(box.overlaps(other) for other in figures[i + 1 :])
        assert box.x0 >= bars_ax.get_window_extent().x0 and box.x1 <= bars_ax.get_window_extent().x1


def test_the_title_is_the_whole_decision_with_plain_dollar_signs(sample: ReplayResult) -> None:
    fig = draw_chart(sample)
    title = fig.axes[0].get_title(loc="left")
    decision = decide(sample)
    assert decision is not None and "$" in decision.sentence
    assert " ".join(title.replace("\\$", "$").split()) == decision.sentence  # wrapped, nothing cut
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # everything drawn, in inches
    assert drawn.x0 >= 0 and drawn.x1 <= fig.get_figwidth() and drawn.y1 <= fig.get_figheight()


def test_the_cause_legend_is_beside_the_bars(sample: ReplayResult) -> None:
    fig = draw_chart(sample)
    causes_ax = fig.axes[1]
    legend = causes_ax.get_legend()
    renderer = fig.canvas.get_renderer()
    assert legend.get_window_extent(renderer).x0 >= causes_ax.get_window_extent(renderer).x1
    totals = [t.get_text() for t in causes_ax.texts]
    report = json.dumps(totals)
    assert all(t.startswith("\\$") for t in totals), report
