"""The chart shows the rows the terminal table shows: panel 1's bars and panel 3's lines are the table's rows (the
cheapest ``@1h`` variant only, ``anchored-tail+response-cache`` only where the table has it), panel 2's bars the
strategies of the terminal's miss-cause table; ``none`` leaves panel 1 only when it would squash the other bars,
and the legend compares each line with what the table's comparison column does."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from promptcache.replay._chart import bar_specs, cause_specs, draw_chart, line_specs, off_scale
from promptcache.replay._engine import DEFAULT_STRATEGIES, ReplayResult, run_replay
from promptcache.replay._report import render_table

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "data" / "sample_conversations.json"
SESSION = ROOT / "tests" / "data" / "claude_code" / "folder-session"
OPENAI = ROOT / "tests" / "data" / "call_logs" / "openai_proxy.jsonl"
MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"


def _sample(gap_s: float = 30.0) -> ReplayResult:
    return run_replay([str(SAMPLE)], MODEL, DEFAULT_STRATEGIES, gap_s=gap_s, force_model=True)


def _table(result: ReplayResult) -> tuple[list[str], str]:
    """The strategy table's row names (markup stripped, the billed row left out) and the whole printed report."""
    console = Console(file=io.StringIO(), width=250, record=True)
    table = render_table(result, console)
    names = [re.sub(r"\[/?[a-z]+\]", "", str(cell)) for cell in table.columns[0]._cells]
    return [n for n in names if n != "as logged (billed)"], console.export_text()


def _chart_names(result: ReplayResult) -> tuple[list[str], list[str]]:
    """Panel 1's row names (bars and the one named off the scale) and panel 3's line names, in drawing order."""
    bars = [b["name"] for b in bar_specs(result)]
    lines = [spec["label"].split(" ")[0] for spec in line_specs(result)]
    return bars, lines


def test_on_the_sample_the_chart_has_the_tables_rows() -> None:
    result = _sample()
    names, _ = _table(result)
    assert names == [
        "none",
        "last-message",
        "langchain-aws",
        "multi-point",
        "anchored-tail",
        "anchored-tail+response-cache",
    ]
    bars, lines = _chart_names(result)
    assert lines == names
    assert sorted(bars) == sorted(names)
    assert off_scale(result, bar_specs(result)) == []  # the current layout is none: it is the scale's zero


def test_on_a_claude_code_session_the_chart_has_the_tables_rows() -> None:
    result = run_replay([str(SESSION)], MODEL, DEFAULT_STRATEGIES)
    assert sorted(n for n in result.variants if n.endswith("@1h")) == [
        "anchored-tail@1h",
        "langchain-aws@1h",
        "last-message@1h",
        "multi-point@1h",
    ]
    names, _ = _table(result)
    assert names == [
        "none",
        "last-message",
        "langchain-aws",
        "multi-point",
        "anchored-tail",
        "as-logged",
        "anchored-tail@1h",
    ]
    bars, lines = _chart_names(result)
    assert lines == names
    assert sorted(bars) == sorted(names)


def test_on_an_openai_log_nothing_is_off_the_scale_and_lines_compare_with_no_cache() -> None:
    result = run_replay([str(OPENAI)], MODEL, DEFAULT_STRATEGIES)
    names, report = _table(result)
    assert names == ["none", "last-message", "langchain-aws", "multi-point", "anchored-tail", "as-logged"]
    bars, lines = _chart_names(result)
    assert lines == names and sorted(bars) == sorted(names)
    specs = bar_specs(result)
    assert off_scale(result, specs) == [] and {s["label"] for s in specs} == {"37.2%"}
    assert "vs no cache" in report and "37.2%" in report
    assert [s["label"] for s in line_specs(result)][0] == "none (37.2% of no cache)"
    fig = draw_chart(result)
    assert fig.axes[0].get_xlabel() == "cost as a share of no caching, % (dashed: as-logged, the current layout)"
    assert fig.axes[2].get_xlabel() == "request (replay order)"  # every row costs what none does: none is drawn


@pytest.mark.parametrize("gap_s", [30.0, 400.0])
def test_the_miss_cause_panel_has_the_miss_cause_tables_strategies(gap_s: float) -> None:
    result = _sample(gap_s)
    _, report = _table(result)
    causes = report[report.index("Why the cache missed") :].split("\n\n")[0]
    printed = list(dict.fromkeys(line.split()[1] for line in causes.splitlines() if line.startswith("│ ")))
    expected = {30.0: ["anchored-tail"], 400.0: ["multi-point"]}[gap_s]  # at 400 s caching stays off (none)
    assert [c["name"] for c in cause_specs(result)] == expected
    assert printed == expected


def test_none_stays_on_panel_1_when_it_squashes_nothing() -> None:
    # shares of no caching, as the table's "vs none": multi-point at 88.1% keeps none (100%) on one scale
    result = run_replay([str(SESSION)], MODEL, DEFAULT_STRATEGIES)
    specs = bar_specs(result)
    assert [(s["name"], s["label"], s["recommended"]) for s in specs] == [
        ("last-message", "51.0%", False),
        ("langchain-aws", "51.0%", False),
        ("anchored-tail", "51.0%", False),
        ("as-logged", "65.0%", True),
        ("anchored-tail@1h", "65.0%", False),
        ("multi-point", "88.1%", False),
        ("none", "100.0%", False),
    ]
    assert off_scale(result, specs) == []
    fig = draw_chart(result)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][-1] == "none"
    # the fixture's simulated bill is 24.75% under its logged one: the shorter bars are not shown to be cheaper
    assert fig.axes[0].get_xlabel() == (
        "cost as a share of no caching, % (dashed: as-logged, the current layout)\nas-logged: keep, although shorter "
        "bars exist: the simulation does not reproduce this log's bill, so\nno shorter bar is shown to be cheaper"
    )
