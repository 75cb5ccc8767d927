"""The consensus gap is picked per source: the lowest gap at which every source's accepted votes keep to
``max_error``, so a large source of easy votes cannot hide a small source of hard ones."""

from __future__ import annotations

import pytest

from promptcache.intention._consensus import pick_gap, pick_gap_per_source

EASY = [(0.01 * i, True) for i in range(1, 101)]  # 100 right votes, gaps 0.01 .. 1.00
HARD = [(0.30, True), (0.20, False), (0.10, True)]  # one wrong vote at gap 0.20


def test_every_source_keeps_to_the_bound():
    pooled = pick_gap(EASY + HARD, 0.01)
    assert pooled == pytest.approx(0.01)  # pooled, the wrong vote is 1 of 103: within 1%
    assert pick_gap_per_source({"easy": EASY, "hard": HARD}, 0.01) == pytest.approx(0.21)  # above the wrong vote
    assert pick_gap_per_source({"easy": EASY, "hard": HARD}, 0.5) == pytest.approx(0.01)


def test_no_gap_when_a_source_is_wrong_at_every_gap():
    assert pick_gap_per_source({"easy": EASY, "wrong": [(0.9, False)]}, 0.0) == pytest.approx(0.91)
    assert pick_gap_per_source({"wrong": [(0.9, False)]}, 0.0) is None
    assert pick_gap_per_source({}, 0.01) is None


@pytest.mark.parametrize("bad", [-0.1, 1.5, True])
def test_a_bad_bound_is_refused(bad):
    with pytest.raises(ValueError, match="max_error must be a number in"):
        pick_gap_per_source({"easy": EASY}, bad)
