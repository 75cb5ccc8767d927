"""The first key's shortcuts give the bytes of the general path: text messages written directly, and tool schemas
read from LangChain's memo."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field, create_model
from support.digests import reference

import promptcache._message_digests as md
import promptcache._tool_schema as ts
from promptcache._keys import _message, _ToolIds, canonical_json


@pytest.fixture(autouse=True)
def empty_memos() -> None:
    md._MEMO.clear()
    md._PREFIXES.clear()
    md._memo_size = 0


def text_messages() -> list[Any]:
    return [
        SystemMessage("rules " * 300),
        HumanMessage("hi", name="sara"),
        ToolMessage("ok", tool_call_id="call_1"),
        ToolMessage("failed", tool_call_id="call_2", status="error"),
        ToolMessage("again", tool_call_id="call_1", name="lookup"),
        ChatMessage("note", role="critic"),
        AIMessage('quote " and \\ and \u00e9 and \n'),
        HumanMessage(""),
    ]


def test_text_messages_written_directly_equal_the_definition() -> None:
    messages = text_messages()
    assert md.message_digests(messages) == reference(messages)
    assert len(md._MEMO) == len(messages)  # every one memoised
    md._PREFIXES.clear()
    assert md.message_digests(messages) == reference(messages)  # from the value memo


def test_plain_json_is_the_canonical_json_of_the_message() -> None:
    for message in text_messages():
        ids = _ToolIds()
        found = md._value_key(type(message), message.__dict__)
        assert found is not None and found[0][7] is None
        key = found[0]
        ordinal = _ToolIds()(key[4]) if key[4] is not None else None
        assert md._plain_json(key, message.content, ordinal) == canonical_json(
            _message(message, ids), exact_floats=False
        )


def test_a_status_of_none_is_written_as_null() -> None:
    message = ToolMessage("x", tool_call_id="c")
    message.__dict__["status"] = None  # outside pydantic's check: _message writes it as null
    assert md.message_digests([message]) == reference([message])
    assert b'"status":null' in canonical_json(_message(message, _ToolIds()), exact_floats=False)


def test_a_lone_surrogate_takes_the_general_path() -> None:
    message = HumanMessage("a\ud800b")
    key = md._value_key(type(message), message.__dict__)
    assert key is not None
    assert md._plain_json(key[0], message.content, None) is None
    assert md.message_digests([message]) == reference([message])


def _tool(name: str) -> StructuredTool:
    args = create_model(f"{name}_args", user_id=(str, Field(description="The user id.")), n=(int, 0))
    return StructuredTool.from_function(lambda **kw: "ok", name=name, args_schema=args, description=f"{name} tool")


def test_the_memo_read_directly_is_the_propertys_value() -> None:
    tool = _tool("direct")
    convert_to_openai_tool(tool)  # LangChain builds its memo
    assert ts._reads_memo_directly(StructuredTool)
    assert ts._tool_call_schema(tool) is tool.tool_call_schema
    assert ts.openai_tool_schema(tool) == convert_to_openai_tool(tool)


def test_a_reassigned_description_is_seen() -> None:
    tool = _tool("renamed")
    convert_to_openai_tool(tool)
    tool.description = "another description"  # LangChain clears its memo
    assert ts.openai_tool_schema(tool) == convert_to_openai_tool(tool)
    assert ts.openai_tool_schema(tool)["function"]["description"] == "another description"  # type: ignore[index]


class Narrow(BaseModel):
    only: str


class OwnSchema(BaseTool):
    """A tool class with its own ``tool_call_schema``: the property is asked, never LangChain's memo."""

    name: str = "own"
    description: str = "its own schema"
    args_schema: type[BaseModel] = create_model("own_args", only=(str, ...), extra=(int, 0))

    @property
    def tool_call_schema(self) -> type[BaseModel]:  # type: ignore[override]
        return Narrow

    def _run(self, only: str, extra: int = 0) -> str:
        return only


def test_a_class_with_its_own_property_is_asked() -> None:
    tool = OwnSchema()
    assert not ts._reads_memo_directly(OwnSchema)
    schema = ts.openai_tool_schema(tool)
    assert schema == convert_to_openai_tool(tool)
    assert list(schema["function"]["parameters"]["properties"]) == ["only"]  # type: ignore[index]
