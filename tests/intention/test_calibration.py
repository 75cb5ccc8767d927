"""The threshold is picked from labelled pairs so the wrong-hit rate stays within the bound; the
``promptcache calibrate-intentions`` command reports precision and hit rate per threshold and per source."""

from __future__ import annotations

import argparse
import json

import pytest

from promptcache.intention._calibrate import Pair, _half, load_pairs, pick_threshold, sweep


def test_pick_threshold_keeps_the_wrong_hit_rate_within_the_bound():
    pairs = [Pair(f"s{i}", f"a{i}", i % 10 != 0, "x") for i in range(200)]
    # Scores: the wrong pairs (every tenth) score 0.5, the right ones 0.9 .. 0.99.
    scored = [(0.5 if i % 10 == 0 else 0.9 + (i % 10) / 100, False) for i in range(200)]
    t, cal, held = pick_threshold(pairs, scored, 0.01)
    assert t == pytest.approx(0.91)
    assert (cal.wrong, held.wrong) == (0, 0)
    assert cal.hit_rate == 1.0 and held.hit_rate == 1.0
    t_loose, cal_loose, _ = pick_threshold(pairs, scored, 0.2)
    assert t_loose == 0.5 and cal_loose.wrong > 0


def test_every_source_is_held_to_the_bound_not_only_the_pool():
    # 300 easy positives of one source (0.60 .. 0.99) and 40 negatives of another, one of them (in the calibration
    # half) at 0.80: pooled, one wrong in about 80 accepted would be within 1%; per source, a source of negatives
    # allows none, so the pick stays above 0.80.
    pairs = [Pair(f"s{i}", f"a{i}", True, "easy") for i in range(300)]
    pairs += [Pair(f"n{i}", f"m{i}", False, "hard") for i in range(40)]
    hard = next(i for i in range(300, 340) if _half(pairs[i]) == 0)
    scored = [(0.6 + 0.39 * i / 299, False) for i in range(300)]
    scored += [(0.8 if i == hard else 0.1, False) for i in range(300, 340)]
    t, cal, _ = pick_threshold(pairs, scored, 0.01)
    assert t > 0.8 and cal.wrong == 0
    t_pooled, _, _ = pick_threshold([Pair(p.stored, p.asked, p.same, "one") for p in pairs], scored, 0.01)
    assert t_pooled < 0.8


def test_refused_pairs_are_never_accepted():
    pairs = [Pair("a", "b", False), Pair("c", "d", True)]
    rows = sweep(pairs, [(1.0, True), (0.95, False)], [0.0, 0.96])
    assert [(r.accepted, r.wrong, r.hit_rate) for r in rows] == [(1, 0, 1.0), (0, 0, 0.0)]


def test_bad_lines_and_bounds_are_named(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"stored": "a", "asked": "b", "same": true}\n{"stored": "a"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        load_pairs(path)
    with pytest.raises(ValueError, match="max_error"):
        pick_threshold([Pair("a", "b", True)], [(1.0, False)], 1.5)


def test_the_package_pairs_come_from_more_than_one_source():
    pairs = load_pairs()
    assert {p.source for p in pairs} == {"own-paraphrases", "own-hard-negatives", "gptcache", "banking77-train"}
    assert sum(p.same for p in pairs) == 509 and len(pairs) == 940
    banking = [p for p in pairs if p.source == "banking77-train"]
    assert len(banking) == 400 and sum(p.same for p in banking) == 200  # a same and a not-same pair per row


class Fixed:
    """Embeddings: 'same' texts share a vector; others are orthogonal."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] if t.startswith("p") else [0.0, 1.0] for t in texts]


def test_the_command_prints_per_threshold_and_per_source(tmp_path, capsys):
    from promptcache.intention._calibrate_cli import run

    path = tmp_path / "pairs.jsonl"
    rows = [{"stored": "p show invoices", "asked": "p please show invoices", "same": True, "source": "mine"}]
    rows += [{"stored": "p list files", "asked": "q list folders", "same": False, "source": "theirs"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code = run(argparse.Namespace(pairs=str(path), max_error=0.01, model_dir=None), embeddings=Fixed())
    out = capsys.readouterr().out
    assert code == 0
    assert "all pairs (2)" in out and "mine (1)" in out and "theirs (1)" in out
    # the pair of one meaning normal form (a filler added): the lexical stage, at every threshold below 1.00; at
    # 1.00 a lookup is exact only, and so is the row
    assert "     0.95      1.000     1.000         1      0" in out
    assert "     1.00        n/a     0.000         0      0" in out  # nothing accepted: no precision
    assert "max_error=0.01: threshold" in out


def test_the_command_rejects_a_bad_file(tmp_path, capsys):
    from promptcache._cli import main

    path = tmp_path / "bad.jsonl"
    path.write_text("not json\n", encoding="utf-8")
    assert main(["calibrate-intentions", str(path)]) == 2
    assert "line 1" in capsys.readouterr().err


def test_a_pair_scores_the_level_up_to_which_a_lookup_accepts_it():
    from promptcache.intention._calibrate import RULE_LEVEL, score_pairs

    pairs = [
        Pair("p Book room 12!", "p book room 12", True),  # the same exact key: every threshold, 1.0 included
        Pair("p show invoices", "p please show invoices", True),  # one meaning normal form: every threshold below 1.0
        Pair("p transfer 500", "p transfer 50", False),  # a veto: never
        Pair("p list files", "p list folders", False),  # the cosine (1.0 here) capped: not an exact match
    ]
    assert score_pairs(Fixed(), pairs) == [(1.0, False), (RULE_LEVEL, False), (0.0, True), (RULE_LEVEL, False)]
    rows = sweep(pairs, score_pairs(Fixed(), pairs), [0.999, 1.0])
    assert [(r.accepted, r.wrong) for r in rows] == [(3, 1), (1, 0)]


def test_the_picked_threshold_is_the_shortest_decimal_accepting_the_same_pairs():
    from promptcache.intention._calibrate import RULE_LEVEL, stated_threshold

    assert stated_threshold(0.8630481, 0.8629) == 0.863  # rounded down, never up past the boundary pair
    assert stated_threshold(0.8630481, 0.86304805) == 0.8630481  # no decimal of 3 to 6 places fits between
    assert stated_threshold(RULE_LEVEL, 0.97) == 0.999  # the lexical stage and no cosine pair: below 1.0
    assert stated_threshold(1.0, RULE_LEVEL) == 1.0
    pairs = [Pair(f"s{i}", f"a{i}", True, "x") for i in range(40)]
    scored = [(0.9 + i / 1000 + 0.0004321, False) for i in range(40)]
    t, cal, _ = pick_threshold(pairs, scored, 0.0)
    lowest = min(s for (s, _), p in zip(scored, pairs) if _half(p) == 0)
    assert t <= lowest and round(t, 3) == t and cal.hit_rate == 1.0
