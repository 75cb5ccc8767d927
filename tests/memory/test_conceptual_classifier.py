"""The conceptual-question classifier: chat-model and callable classifiers, bad input."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from promptcache.memory import is_conceptual_question
from promptcache.memory._classifier import ChatModelClassifier, aclassify, make_classifier
from promptcache.testing import ScriptedChatModel


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
