"""The default key's memo per model object (plugin/response_cache/_steady.py): after it remembered a model's LangChain
string, every change the model's ``_identifying_params`` shows gives the key a fresh model object gets."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import ModelRequest
from langchain_core.messages import HumanMessage

import promptcache.response_cache._steady as st
from promptcache.response_cache._keys import request_key
from promptcache.response_cache._model_identity import identity_parts
from promptcache.testing import ScriptedChatModel

MESSAGES = [HumanMessage("where is my order?")]


def key(model: Any) -> str:
    return request_key(ModelRequest(model=model, messages=MESSAGES, system_message=None, tools=[]), "bot", None)


class KwargsModel(ScriptedChatModel):
    """A model whose identifying params hold a dict (a value that can change in place)."""

    extra: dict[str, Any] = {}

    @property
    def _identifying_params(self) -> dict[str, object]:
        return {"model_name": self.model_name, "extra": self.extra}


@pytest.mark.parametrize("edit", ["temperature", "model_name", "negative_zero", "int_for_float"])
def test_a_change_after_the_model_was_remembered_gives_the_fresh_key(edit: str) -> None:
    model = ScriptedChatModel(temperature=0.0)
    before = key(model)
    assert key(model) == before and st._IDENTITY_SEEN[id(model)][0] is model
    if edit == "temperature":
        model.temperature = 0.7
    elif edit == "model_name":
        model.model_name = "other"
    elif edit == "negative_zero":
        model.temperature = -0.0  # == 0.0, another repr
    else:
        model.__dict__["temperature"] = 0  # == 0.0, another repr (bypassing validation)
    after = key(model)
    fresh = ScriptedChatModel.model_construct(**model.__dict__)
    assert after != before and after == key(fresh)
    assert st.identity_parts(model) == identity_parts(model)


def test_a_mutable_identifying_value_is_not_remembered() -> None:
    model = KwargsModel(extra={"top_k": 1})
    before = key(model)
    assert id(model) not in st._IDENTITY_SEEN
    model.extra["top_k"] = 2  # edited in place: the same object
    assert key(model) != before
    assert st.identity_parts(model) == identity_parts(model)


def test_the_same_unchanged_model_skips_the_formatting(monkeypatch: pytest.MonkeyPatch) -> None:
    model = ScriptedChatModel(temperature=0.25)
    before = key(model)
    monkeypatch.setattr(st, "sorted", lambda items: pytest.fail("formatted again"), raising=False)
    assert key(model) == before
