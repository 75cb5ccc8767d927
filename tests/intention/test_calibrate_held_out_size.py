"""``promptcache calibrate-intentions`` on a file too small to show the bound says so, with the number of pairs that
would be needed; on a file large enough it says the bound is shown. The pairs are embedded in two model calls (the
texts, then the words the word check compares), never pair by pair."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from promptcache.intention._calibrate import Pair, pairs_needed, score_pairs, wrong_rate_bound
from promptcache.intention._calibrate_cli import run

SMALL = [
    {"stored": "show my invoices", "asked": "please show my invoices", "same": True},
    {"stored": "weather in Oslo", "asked": "what's the weather in Oslo", "same": True},
    {"stored": "turn off the lights", "asked": "turn on the lights", "same": False},
    {"stored": "my open tickets", "asked": "my closed tickets", "same": False},
    {"stored": "cancel my order", "asked": "could you cancel my order", "same": True},
    {"stored": "flights to Paris", "asked": "flights to Rome", "same": False},
]


class Words:
    """One axis per distinct word (a deterministic stand-in for a model); counts its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.axes: dict[str, int] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        out = []
        for t in texts:
            v = [0.0] * 64
            for w in t.casefold().split():
                v[self.axes.setdefault(w, len(self.axes)) % 64] += 1.0
            out.append(v)
        return out


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], rows: list[dict[str, object]]) -> str:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert run(argparse.Namespace(pairs=str(path), max_error=0.01, model_dir=None), embeddings=Words()) == 0
    return capsys.readouterr().out


def test_a_tiny_file_says_the_held_out_half_cannot_show_the_bound(tmp_path, capsys):
    out = _run(tmp_path, capsys, SMALL)
    last = out.rstrip().splitlines()[-1]
    assert last.startswith("NOT SHOWN: the held-out half is too small to show max_error=0.01: the held-out half holds ")
    assert "Showing it needs at least 299 accepted held-out pairs with no wrong hit, so about 598 accepted" in last


def test_a_large_enough_file_shows_the_bound(tmp_path, capsys):
    rows = [{"stored": f"show invoice {i}", "asked": f"please show invoice {i}", "same": True} for i in range(800)]
    last = _run(tmp_path, capsys, rows).rstrip().splitlines()[-1]
    assert last.startswith("shown: the held-out half holds ")
    assert last.endswith("within max_error=0.01.")


def test_the_bound_and_the_pairs_needed():
    assert pairs_needed(0.01) == 299  # ln(0.05) / ln(0.99) = 298.07
    assert pairs_needed(0.05) == 59
    assert pairs_needed(0.0) is None and pairs_needed(1.0) == 1
    assert wrong_rate_bound(0, 0) == 1.0
    assert wrong_rate_bound(299, 0) == pytest.approx(1 - 0.05 ** (1 / 299), abs=1e-12)
    assert wrong_rate_bound(299, 0) < 0.01 < wrong_rate_bound(298, 0)
    assert wrong_rate_bound(1000, 5) == pytest.approx(0.010484, abs=1e-6)  # Clopper-Pearson, one-sided 95%


def test_pairs_are_embedded_in_two_calls_not_pair_by_pair():
    model = Words()
    pairs = [Pair(r["stored"], r["asked"], r["same"]) for r in SMALL] * 50  # type: ignore[arg-type]
    scored = score_pairs(model, pairs)
    assert model.calls <= 2
    assert len(scored) == 300


def test_pairs_labelled_both_ways_say_no_threshold_meets_the_bound(tmp_path, capsys):
    from promptcache.intention._calibrate import _half

    stored, asked = next(
        (f"book room {i}", f"Book room {i}!")
        for i in range(100)
        if _half(Pair(f"book room {i}", f"Book room {i}!", True, "")) == 0
    )
    rows = [{"stored": stored, "asked": asked, "same": same} for same in (True, False) for _ in range(3)]
    last = _run(tmp_path, capsys, rows).rstrip().splitlines()[-1]
    assert last == (
        "NO THRESHOLD meets max_error=0.01: even at 1.000 the calibration half accepts 6 pairs of which 3 are wrong "
        "(pairs that score the same but are labelled differently); the cache would serve wrong results on such pairs "
        "at any threshold."
    )
