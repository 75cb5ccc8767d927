"""The trained part of the load decision: a naive Bayes model over a question's words, shipped as JSON.

``load_model.json`` (beside this module) holds the log-probabilities of a multinomial naive Bayes model with two
classes, ``work`` (the turn needs the user's project state) and ``general`` (general knowledge). It was fitted by
``python bench/memory_load_train.py`` on the labelled questions in ``tests/data/memory_load_questions.jsonl``,
``tests/data/memory_load_code_and_trivia.jsonl`` and ``tests/data/memory_load_grid.jsonl`` (how they were written:
``tests/data/README.md``), without the rows a rule decides first; the threshold and the smoothing were chosen by
cross-validation on those files alone, and the held-out figures (other files, never fitted on) are in
bench/README.md ("### Memory load decision").

Features (`features`): lower-case word unigrams and bigrams (``'`` kept, digits kept), the first word, a
length bucket, whether the text ends with ``?``, and two word classes that pool words the training files hold too few
of each to weigh alone: ``<we>`` (a first-person plural word: "we", "us", "our", "ours", ...; "US" in capitals is
the country) and ``<now>`` (a time expression anchored at the asker's present: "today", "tonight", "yesterday",
"this week", "last sprint", "right now", "so far", ...: `NOW`). Both classes are English grammar, not words of a
data set: "we" is the asker's group (or anyone, as in "why do we yawn": the weights say how often), and the
asker's "now" is where project state lives, while general knowledge holds at any time. One question at a time:
the conversation is the rules' business (`promptcache.memory._classifier`).

The threshold is set by a stated cost ratio, not by accuracy: `MISS_COST`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from promptcache._types import JSONMapping

__all__ = ["MISS_COST", "MODEL_PATH", "NOW", "LoadModel", "features", "load_model"]

MODEL_PATH = Path(__file__).with_name("load_model.json")
MISS_COST = 20
"""How many needless project-state loads one skipped needed load is taken to cost: the threshold is the score cut
with the least ``MISS_COST * work rows skipped + general rows loaded`` over cross-validation on the training files
(``bench/memory_load_train.py``). A policy constant, stated rather than measured: a skipped load costs a wrong or
uninformed answer and the re-asked turn -- in the typed-memory scenario the prompt alone is 6x the project-state
section (289.8 vs 48.4 tokens/turn with the oracle classifier, ``python bench/memory_tokens.py``), before the conversation history and the
wrong answer's output tokens (priced 5x input on Claude) -- and the user's time, which no price covers; a needless
load costs the section's tokens. On the shipped training files every ratio from 10 to 100 gives the same
threshold (``python bench/memory_load_train.py --select`` prints the table)."""
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_WE = re.compile(r"\b(?:we|we're|we've|we'll|we'd|us|our|ours|ourselves)\b", re.I)
_COUNTRY = re.compile(r"\bU\.?S\b")
NOW = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|right now|so far|as of now|at the moment|"
    r"(?:this|last|next)\s+(?:morning|afternoon|evening|night|week|weekend|month|quarter|year|sprint|release|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b",
    re.I,
)
"""Time expressions anchored at the asker's present (the ``<now>`` feature): deictic day words, "this / last /
next" with a period or weekday, "right now", "so far", "at the moment" (English deixis; "still", "yet" and
"currently" are left out: "is Pluto still a planet" and "who is currently the UN secretary-general" ask about the
world's present, not the asker's)."""
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'"})


def _length_bucket(n: int) -> str:
    return "<len:1>" if n <= 1 else "<len:2-3>" if n <= 3 else "<len:4-6>" if n <= 6 else "<len:7+>"


def features(question: str) -> list[str]:
    """The model's features of ``question`` (module docstring)."""
    words = _WORD.findall(question.translate(_QUOTES).lower())
    out = list(words)
    out += [f"{a} {b}" for a, b in zip(words, words[1:])]
    out.append(f"<first:{words[0]}>" if words else "<first:>")
    out.append(_length_bucket(len(words)))
    if question.rstrip().endswith("?"):
        out.append("<qmark>")
    if _WE.search(_COUNTRY.sub(" ", question.translate(_QUOTES))):
        out.append("<we>")
    if NOW.search(question):
        out.append("<now>")
    return out


@dataclass(frozen=True)
class LoadModel:
    """A fitted two-class naive Bayes model.

    Attributes:
        prior: ``log P(general) - log P(work)``.
        weights: per feature, ``log P(f | general) - log P(f | work)`` (Laplace-smoothed).
        unseen: the weight of a feature never seen in training (0: it says nothing about either class).
        threshold: a question is general when its score exceeds it (chosen by cross-validation, module docstring).
        meta: how the model was made (training files, counts, smoothing).
    """

    prior: float
    weights: Mapping[str, float]
    unseen: float
    threshold: float
    meta: JSONMapping

    def score(self, feats: Sequence[str]) -> float:
        """The log-odds ``general : work`` of a feature list (higher = more general)."""
        return self.prior + sum(self.weights.get(f, self.unseen) for f in feats)

    def is_general(self, question: str) -> bool:
        """Whether the model calls ``question`` general knowledge (score above ``threshold``)."""
        return self.score(features(question)) > self.threshold

    @classmethod
    def fit(cls, rows: Sequence[tuple[Sequence[str], bool]], alpha: float = 1.0, threshold: float = 0.0) -> LoadModel:
        """Fit on ``(features, is_general)`` pairs with Laplace smoothing ``alpha`` (> 0).

        Raises:
            ValueError: no rows of one class, or ``alpha <= 0``.
        """
        if alpha <= 0:
            raise ValueError(f"alpha must be > 0, got {alpha!r}")
        counts: dict[bool, dict[str, int]] = {True: {}, False: {}}
        docs = {True: 0, False: 0}
        for feats, general in rows:
            docs[general] += 1
            for f in feats:
                counts[general][f] = counts[general].get(f, 0) + 1
        if not docs[True] or not docs[False]:
            raise ValueError(f"both classes need rows, got {docs[True]} general and {docs[False]} work")
        vocab = set(counts[True]) | set(counts[False])
        totals = {c: sum(counts[c].values()) + alpha * (len(vocab) + 1) for c in (True, False)}
        weights = {
            f: math.log((counts[True].get(f, 0) + alpha) / totals[True])
            - math.log((counts[False].get(f, 0) + alpha) / totals[False])
            for f in sorted(vocab)
        }
        unseen = 0.0  # a word never seen in training says nothing about either class
        prior = math.log(docs[True] / docs[False])
        meta = {"rows": docs[True] + docs[False], "general": docs[True], "work": docs[False], "alpha": alpha}
        return cls(prior, weights, unseen, threshold, meta)

    def to_json(self) -> dict[str, object]:
        """The JSON form written to ``load_model.json`` (weights rounded to 4 decimals)."""
        return {
            "prior": round(self.prior, 4),
            "unseen": round(self.unseen, 4),
            "threshold": round(self.threshold, 4),
            "meta": dict(self.meta),
            "weights": {f: round(w, 4) for f, w in self.weights.items()},
        }

    @classmethod
    def from_json(cls, data: JSONMapping) -> LoadModel:
        """Read `to_json`'s form.

        Raises:
            ValueError: a missing or non-numeric field, or weights / meta that are not objects (named).
        """
        weights, meta = data.get("weights"), data.get("meta")
        if not isinstance(weights, Mapping) or not isinstance(meta, Mapping):
            raise ValueError(f"not a load model: weights and meta must be objects, got {weights!r:.40} / {meta!r:.40}")
        return cls(
            _number(data, "prior"),
            {str(k): _number(weights, k) for k in weights},
            _number(data, "unseen"),
            _number(data, "threshold"),
            meta,
        )


def _number(data: JSONMapping, name: str) -> float:
    """``data[name]`` as a float: an int or float, not a bool.

    Raises:
        ValueError: missing or not a number (named).
    """
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"not a load model: {name!r} must be a number, got {value!r}")
    return float(value)


@lru_cache(maxsize=1)
def load_model() -> LoadModel:
    """The shipped model (`MODEL_PATH`), read once."""
    return LoadModel.from_json(json.loads(MODEL_PATH.read_text(encoding="utf-8")))
