"""The conceptual-question classifier: default rules, its measured accuracy, chat-model and callable classifiers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from promptcache.memory import is_conceptual_question
from promptcache.memory._classifier import ChatModelClassifier, aclassify, make_classifier, work_signals
from promptcache.testing import ScriptedChatModel

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"


def _accuracy(name: str) -> tuple[int, int, list[str]]:
    rows = [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]
    wrong = [r["question"] for r in rows if is_conceptual_question(r["question"]) != r["conceptual"]]
    return len(rows) - len(wrong), len(rows), wrong


def test_labelled_sets_are_balanced():
    for name, size in [
        ("conceptual_questions.jsonl", 80),
        ("conceptual_questions_heldout.jsonl", 40),
        ("conceptual_questions_heldout2.jsonl", 40),
    ]:
        rows = [json.loads(line) for line in (DATA / name).read_text().splitlines()]
        assert len(rows) == size and sum(r["conceptual"] for r in rows) == size // 2


def test_default_accuracy_is_the_reported_figure():
    """The figures in bench/README.md; a change to the rules must update them. Since the conversation-aware rules
    (issue 14) a question is conceptual only in a general-knowledge form, so the misses are all on the loading
    side: no work question of these sets is skipped."""
    correct, total, wrong = _accuracy("conceptual_questions.jsonl")
    # 80/80 with the earlier rules; the write-ahead-log question loads since a work noun as a bare-plural subject
    # of a how/why question reads as the organisation's procedure (the blind-set rules, issue 14)
    assert (correct, total, wrong) == (78, 80, ["Is TCP faster than UDP?", "Why do databases use write-ahead logs?"])
    correct, total, wrong = _accuracy("conceptual_questions_heldout.jsonl")
    assert (correct, total) == (38, 40)  # 36/40 with the earlier rules, 4 work questions skipped
    assert wrong == ["Is Rust memory safe?", "How can I improve my public speaking?"]
    # written (and committed) before the earlier rule changes; 35/40 with them (5 work questions skipped)
    assert _accuracy("conceptual_questions_heldout2.jsonl") == (40, 40, [])


@pytest.mark.parametrize(
    ("question", "signals"),
    [
        ("What is the difference between supervised and reinforcement learning?", []),
        ("How do I reverse a list in Python?", []),
        ("What does ETA stand for?", []),
        ("What's the ETA?", ["definite_work_object", "state_attribute", "status"]),
        ("ETA?", ["status"]),
        ("Is my refund processed yet?", ["first_person", "time_now"]),
        ("Any update on ticket PAY-1432?", ["status", "identifier"]),
        ("How is the migration going?", ["definite_work_object", "ongoing", "status"]),
        ("Tell me about the history of the Internet.", []),
        ("How many sprint stories are done?", ["work_state"]),
        ("What is a pending transaction?", []),
        ("Explain why builds get blocked by flaky tests.", []),
        ("What does it mean when a PR is merged?", []),
        ("Why are orders failing?", ["work_state", "named_work_subject", "ongoing"]),
        ("Where do I find the on-call runbook?", ["definite_work_object", "organisation"]),
        ("Which dashboard shows the shipping-API latency?", ["definite_work_object"]),
    ],
)
def test_work_signals(question, signals):
    assert work_signals(question) == signals
    assert is_conceptual_question(question) is (signals == [])


def test_empty_question_is_not_conceptual_and_bad_type_raises():
    assert is_conceptual_question("   ") is False
    with pytest.raises(TypeError, match="question must be a string"):
        is_conceptual_question(None)


def test_make_classifier():
    assert make_classifier(None) is is_conceptual_question
    fn = lambda q: True  # noqa: E731
    assert make_classifier(fn) is fn
    assert isinstance(make_classifier(ScriptedChatModel(replies=["work"])), ChatModelClassifier)
    with pytest.raises(TypeError, match="classifier must be"):
        make_classifier(42)


async def test_chat_model_classifier_sync_async_and_fallback():
    model = ScriptedChatModel(replies=["Conceptual.", AIMessage("work"), "conceptual"])
    clf = ChatModelClassifier(model)
    assert clf("What is a B-tree?") is True
    assert clf("Where is my order?") is False
    assert await aclassify(clf, "Why is the sky blue?") is True
    assert model.calls == 3 and model.seen[0][1].content == "What is a B-tree?"
    broken = ChatModelClassifier(ScriptedChatModel(error=RuntimeError("down")))
    assert broken("What is a B-tree?") is True and broken("Where is my order 42?") is False
    assert await broken.acall("Where is my order 42?") is False
