"""The model id a ResponseCache hit prices its savings with (`promptcache._savings.model_id_of`): read from the
instance's fields or extras where the class serves the names no other way, through ``getattr`` where it does (a
property, a ``__getattr__`` of its own), with the same answer either way."""

from __future__ import annotations

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from pydantic import BaseModel, ConfigDict

from promptcache._savings import model_id_of
from promptcache.testing import ScriptedChatModel


class _WithModelId(FakeListChatModel):
    model_id: str = "anthropic.claude-sonnet-4-5-20250929-v1:0"
    base_model_id: str | None = None


class _WithProperty(FakeListChatModel):
    @property
    def model_name(self) -> str:
        return "from-a-property"


class _Extra(BaseModel):
    model_config = ConfigDict(extra="allow")


class _OwnGetattr:
    def __getattr__(self, name: str) -> str:
        if name == "model":
            return "from-getattr"
        raise AttributeError(name)


def test_a_field_is_read_from_the_instance_in_the_order_of_the_names() -> None:
    model = _WithModelId(responses=["x"])
    assert model_id_of(model) == "anthropic.claude-sonnet-4-5-20250929-v1:0"
    model.base_model_id = "anthropic.claude-opus-4-6"  # the first name wins, as before
    assert model_id_of(model) == "anthropic.claude-opus-4-6"


def test_a_model_without_any_of_the_names_has_none_and_a_later_name_is_found() -> None:
    assert model_id_of(FakeListChatModel(responses=["x"])) is None
    assert model_id_of(ScriptedChatModel(replies=["x"])) == "scripted"  # its ``model`` field, the last name


def test_a_property_extra_fields_or_an_own_getattr_are_read_through_getattr() -> None:
    assert model_id_of(_WithProperty(responses=["x"])) == "from-a-property"
    assert model_id_of(_Extra(model="from-extra")) == "from-extra"
    assert model_id_of(_OwnGetattr()) == "from-getattr"
