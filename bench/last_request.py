"""Can a placement learn to skip the tail write of a conversation's last request?

Run by hand from the project root (figures go to bench/README.md, section "Replay: the last request"):

    python bench/last_request.py [--data tau_bench_gpt-4o-airline.json] [--gap-s 10]

Needs the ``bench`` extra (scikit-learn for the online logistic regression).

Why it matters. At tight request spacing langchain-aws' placement already reads everything the previous request
sent and writes only what is new; the one write nobody reads is the tail written by each conversation's final
request. Skipping a tail write saves ``write - input`` per token when the request is the last, and costs
``input - read`` per token when it is not (the next request writes those tokens instead of reading them), so it
pays only when ``P(last) > (input - read) / (write - read)``: 0.783 at Claude's prices (0.9 / 1.15).

Each variant below is langchain-aws' placement with the tail point dropped when a predictor says "last" with
more than that probability; the predictors learn online, from outcomes already known (a request is "continued"
when the next request of its conversation arrives, "last" when none arrived within the TTL), as a deployed
strategy would:

- ``signature``: the observed P(last) per kind of final block (user text, or the result of tool X), Laplace
  smoothed, after 10 outcomes — the rule ``anchored-tail`` applies (its rule 4).
- ``logistic alpha=A``: online logistic regression (scikit-learn ``SGDClassifier(loss="log_loss")``, one ``partial_fit``
  per outcome) over the signature, the words and word pairs of the last user message and of the assistant's
  previous reply (hashed), after 100 outcomes of which 10 were last; one variant per L2 strength ``A``.
- ``foresight``: knows the future (the bound no real strategy reaches).

It prints each variant's input-side cost relative to ``none`` and to langchain-aws, and how many tail writes it
skipped on last and on continued requests.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from typing import ClassVar

import numpy as np
from shared_data import find_data_file

from promptcache._pricing import ModelPrice
from promptcache.replay._engine import run_replay
from promptcache.replay._models import CacheRules
from promptcache.replay._prepare import Request
from promptcache.replay._registry import STRATEGIES
from promptcache.replay._simulator import Checkpoint
from promptcache.replay._strategies import LangChainAwsStrategy

_NAME = "tau_bench_gpt-4o-airline.json"
MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"
_WORD = re.compile(r"[a-z0-9']+")


def _features(request: Request) -> tuple[str, list[str]]:
    """(signature, hashed-feature tokens) of a request, from what it holds (never from its reply)."""
    messages = request.prepared.conversation.messages[: request.cut]
    last = messages[-1].blocks[-1] if messages[-1].blocks else None
    signature = "empty" if last is None else f"{last.kind}:{last.name if last.kind == 'tool_result' else ''}"
    tokens = [f"sig={signature}"]
    if last is not None and last.kind == "text":
        tokens += _words("u", last.text)
    previous = next((m for m in reversed(messages[:-1]) if m.role == "assistant"), None)
    if previous is not None:
        tokens += _words("a", " ".join(b.text for b in previous.blocks if b.kind == "text"))
    return signature, tokens


def _words(prefix: str, text: str) -> list[str]:
    words = _WORD.findall(text.lower())
    return [f"{prefix}:{w}" for w in words] + [f"{prefix}:{a}_{b}" for a, b in zip(words, words[1:])]


class _SignatureRate:
    def __init__(self) -> None:
        self.counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # signature -> [continued, last]

    def learn(self, features: tuple[str, list[str]], last: bool) -> None:
        self.counts[features[0]][last] += 1

    def p_last(self, features: tuple[str, list[str]]) -> float | None:
        continued, last = self.counts.get(features[0], (0, 0))
        return None if continued + last < 10 else (last + 1) / (continued + last + 2)


class _Logistic:
    def __init__(self, alpha: float) -> None:
        from sklearn.feature_extraction import FeatureHasher
        from sklearn.linear_model import SGDClassifier

        self.hasher = FeatureHasher(n_features=2**18, input_type="string", alternate_sign=False)
        self.model = SGDClassifier(loss="log_loss", alpha=alpha, random_state=0)
        self.seen = [0, 0]

    def learn(self, features: tuple[str, list[str]], last: bool) -> None:
        self.model.partial_fit(self.hasher.transform([features[1]]), np.array([int(last)]), classes=np.array([0, 1]))
        self.seen[last] += 1

    def p_last(self, features: tuple[str, list[str]]) -> float | None:
        if sum(self.seen) < 100 or self.seen[1] < 10:
            return None
        return float(self.model.predict_proba(self.hasher.transform([features[1]]))[0, 1])


class _LearnedSkip(LangChainAwsStrategy):
    """langchain-aws' placement; the tail point is dropped when the predictor's P(last) exceeds the break-even."""

    predictor_class: ClassVar[type] = _SignatureRate
    predictor_args: ClassVar[tuple[float, ...]] = ()
    last_run: ClassVar[dict[str, _LearnedSkip]] = {}

    def __init__(self, rules: CacheRules, price: ModelPrice | None = None, ttl_s: float = 300.0) -> None:
        super().__init__(rules, price, ttl_s)
        assert price is not None
        self.break_even = (price.input - price.read) / (price.write_5m - price.read)
        self.predictor = self.predictor_class(*self.predictor_args)
        self.pending: dict[str, tuple[float, tuple[str, list[str]]]] = {}  # conversation -> (sent at, features)
        self.skipped = [0, 0]  # tail writes skipped on [continued, last] requests
        type(self).last_run[self.name] = self

    def _resolve(self, now_s: float, conversation: str) -> None:
        for cid, (sent, features) in list(self.pending.items()):
            if cid == conversation:
                self.predictor.learn(features, False)
                del self.pending[cid]
            elif now_s - sent > self.ttl_s:
                self.predictor.learn(features, True)
                del self.pending[cid]

    def skip(self, request: Request, features: tuple[str, list[str]]) -> bool:
        p = self.predictor.p_last(features)
        return p is not None and p > self.break_even

    def place(self, request: Request) -> list[Checkpoint]:
        cid = request.prepared.conversation.id
        self._resolve(request.time_s, cid)
        features = _features(request)
        points = super().place(request)
        if self.skip(request, features):
            self.skipped[request.is_last] += 1
            points = [p for p in points if p.boundary != request.groups[-1].end]
        self.pending[cid] = (request.time_s, features)
        return points


class SignatureSkip(_LearnedSkip):
    name = "signature"


def logistic_skip(alpha: float) -> type[_LearnedSkip]:
    """A variant with the online logistic regression at L2 strength ``alpha``."""
    return type(
        f"LogisticSkip_{alpha:g}",
        (_LearnedSkip,),
        {"name": f"logistic alpha={alpha:g}", "predictor_class": _Logistic, "predictor_args": (alpha,)},
    )


class ForesightSkip(_LearnedSkip):
    name = "foresight"

    def skip(self, request: Request, features: tuple[str, list[str]]) -> bool:
        return request.is_last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help=f"{_NAME} (default: found by bench/shared_data.py)")
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--gap-s", type=float, default=10.0)
    parser.add_argument(
        "--alphas", default="1e-4,1e-3,1e-2,3e-2", help="L2 strengths of the logistic variants, comma-separated"
    )
    args = parser.parse_args()
    alphas = [float(a) for a in args.alphas.split(",") if a.strip()]
    variants = [SignatureSkip, *(logistic_skip(a) for a in alphas), ForesightSkip]
    for cls in variants:
        STRATEGIES[cls.name] = cls
    names = ["langchain-aws", *(c.name for c in variants)]
    result = run_replay([find_data_file(_NAME, args.data)], args.model, names, gap_s=args.gap_s, combined=False)
    base = result.strategies["langchain-aws"].cost_usd
    print(
        f"{result.conversations} conversations, {result.requests} requests, {args.model}, gap {args.gap_s:g} s; "
        f"break-even P(last) = {_LearnedSkip.last_run['signature'].break_even:.3f}"
    )
    print("| variant | cost vs none | cost vs langchain-aws | tail writes skipped on last / continued requests |")
    print("|---|---|---|---|")
    print(f"| langchain-aws | {result.relative('langchain-aws'):.5f} | 1.00000 | - |")
    for cls in variants:
        row = result.strategies[cls.name]
        skipped = _LearnedSkip.last_run[cls.name].skipped
        print(
            f"| {cls.name} | {result.relative(cls.name):.5f} | {row.cost_usd / base:.5f} | "
            f"{skipped[1]} / {skipped[0]} |"
        )


if __name__ == "__main__":
    main()
