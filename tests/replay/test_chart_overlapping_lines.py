"""The replay chart keeps every line visible when strategies cost the same (their cumulative lines coincide)."""

from __future__ import annotations

from pathlib import Path

from promptcache.replay._chart import LINE_STYLES, line_specs, write_chart
from promptcache.replay._engine import run_replay

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "sample_conversations.json"
MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"


def _specs() -> dict[str, dict]:
    result = run_replay([str(SAMPLE)], MODEL, ["last-message", "langchain-aws", "multi-point", "anchored-tail"])
    assert result.strategies["langchain-aws"].cumulative_usd == result.strategies["anchored-tail"].cumulative_usd
    return {spec["label"].split(" ")[0]: spec for spec in line_specs(result)}


def test_every_line_has_its_own_dash_and_marker() -> None:
    specs = _specs()
    assert list(specs) == [
        "none",
        "last-message",
        "langchain-aws",
        "multi-point",
        "anchored-tail",
        "anchored-tail+response-cache",
    ]
    styles = [(s["linestyle"], s["marker"]) for s in specs.values()]
    assert styles == list(LINE_STYLES[: len(styles)])
    assert len(set(styles)) == len(styles)


def test_an_identical_line_says_so_and_lies_on_top_of_a_wider_one() -> None:
    specs = _specs()
    assert specs["anchored-tail"]["label"] == "anchored-tail (18.5% of none) = langchain-aws"
    assert specs["langchain-aws"]["label"] == "langchain-aws (18.5% of none)"
    # langchain-aws has two lines on it (anchored-tail, and the +response-cache row within 1% of the height): it
    # is drawn first and widest; the last of the three is the narrowest and on top.
    widths = [specs[n]["linewidth"] for n in ("langchain-aws", "anchored-tail", "anchored-tail+response-cache")]
    assert widths == [5.4, 3.6, 1.8]
    orders = [specs[n]["zorder"] for n in ("langchain-aws", "anchored-tail", "anchored-tail+response-cache")]
    assert orders == sorted(orders)
    assert specs["none"]["linewidth"] == 1.8  # a line nothing lies on keeps the base width


def test_markers_are_staggered_so_coinciding_lines_show_theirs() -> None:
    offsets = [spec["markevery"][0] for spec in _specs().values()]
    assert len(set(offsets)) == len(offsets)


def test_chart_is_written(tmp_path: Path) -> None:
    result = run_replay([str(SAMPLE)], MODEL, ["anchored-tail"])
    path = write_chart(result, tmp_path / "sub" / "replay.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
