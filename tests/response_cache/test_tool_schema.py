"""`openai_tool_schema` gives LangChain's ``convert_to_openai_tool`` value, or ``None`` (LangChain then converts)."""

from __future__ import annotations

import enum
from typing import Annotated, Literal

import langchain_core
import pytest
from langchain_core.tools import BaseTool, StructuredTool, Tool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field, create_model

from promptcache._keys import canonical_json
from promptcache._tool_keys import canonical_tool
from promptcache._tool_schema import openai_tool_schema


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Inner(BaseModel):
    """A nested model (its schema holds a ``$ref``)."""

    x: int


class WithTitleProperty(BaseModel):
    title: str = Field(description="A property named title.")
    items: list[dict[str, int]] = Field(default_factory=list, title="Items")


@tool
def search(query: str, limit: int = 10, exact: bool | None = None) -> str:
    """Search the flights.

    Args:
        query: what to look for.
        limit: at most this many.
        exact: exact matches only.
    """
    return query


@tool(parse_docstring=True)
def book(flight: str, seats: Annotated[int, "how many seats"], cabin: Literal["economy", "business"]) -> str:
    """Book a flight.

    Args:
        flight: the flight number.
        seats: seats to book.
        cabin: the cabin class.
    """
    return flight


@tool
def paint(color: Color, ratio: float = 0.5) -> str:
    """Paint it."""
    return str(color)


@tool
def nested(inner: Inner) -> str:
    """Takes a nested model."""
    return str(inner)


@tool
def no_args() -> str:
    """No arguments at all."""
    return "ok"


class Custom(BaseTool):
    name: str = "custom"
    description: str = "A BaseTool subclass with a dict schema."
    args_schema: dict[str, object] = {  # type: ignore[assignment]
        "title": "custom_args",
        "description": "ignored",
        "type": "object",
        "properties": {"a": {"type": "string", "title": "A"}, "title": {"title": "T", "type": "number"}},
        "required": ["a"],
    }

    def _run(self, a: str) -> str:
        return a


def _structured(i: int) -> StructuredTool:
    args = create_model(
        f"tool_{i}_args",
        user_id=(str, Field(description="The user id.")),
        amount=(int, Field(default=0, description=f"Amount, tool {i}.")),
        big=(int, Field(default=2**70)),
    )
    return StructuredTool.from_function(lambda **kw: "ok", name=f"tool_{i}", args_schema=args, description="d " * 3)


TOOLS = [
    search,
    book,
    paint,
    no_args,
    Custom(),
    _structured(1),
    StructuredTool.from_function(lambda **kw: "ok", name="titled", args_schema=WithTitleProperty, description=""),
    StructuredTool.from_function(
        lambda **kw: "ok",
        name="nan",
        args_schema=create_model("nan_args", x=(float, Field(default=float("nan")))),
        description="n",
    ),
]


@pytest.mark.parametrize("the_tool", TOOLS, ids=lambda t: t.name)
def test_same_value_as_langchain(the_tool: BaseTool) -> None:
    fast = openai_tool_schema(the_tool)
    theirs = convert_to_openai_tool(the_tool)
    assert fast is None or fast == theirs, f"langchain-core {langchain_core.__version__}: schemas differ"
    assert canonical_json(canonical_tool(the_tool)) == canonical_json(theirs)


def test_taken_for_plain_tools() -> None:
    """The usual tools take the fast path (not only the fallback)."""
    taken = {t.name for t in TOOLS if openai_tool_schema(t) is not None}
    assert taken == {"search", "book", "no_args", "custom", "titled"}  # paint: an Enum is a $ref


def test_left_to_langchain() -> None:
    """A reference, a value JSON does not hold exactly, a ``Tool`` and non-tools go through LangChain."""
    assert openai_tool_schema(nested) is None  # $ref
    assert openai_tool_schema(TOOLS[5]) is None  # 2**70 default: orjson refuses it
    assert openai_tool_schema(TOOLS[7]) is None  # NaN default
    assert openai_tool_schema(Tool(name="t", func=lambda x: x, description="d")) is None
    assert openai_tool_schema({"type": "function", "function": {"name": "f"}}) is None
    assert openai_tool_schema(len) is None


def test_fresh_value_each_call() -> None:
    first = openai_tool_schema(search)
    assert first is not None
    first["function"]["parameters"]["properties"].clear()  # type: ignore[index,union-attr]
    assert openai_tool_schema(search) == convert_to_openai_tool(search)
