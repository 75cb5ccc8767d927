"""``current_intention``: the intention IntentionCache files a tool call under (shared with the replay)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from promptcache.intention._middleware import current_intention

HISTORY = [
    SystemMessage("sys"),
    HumanMessage("Where is order A1?"),
    AIMessage("looking"),
    HumanMessage([{"type": "text", "text": "and"}, "B2", {"type": "image_url", "image_url": {"url": "x"}}]),
    AIMessage("", tool_calls=[{"name": "get", "args": {}, "id": "t", "type": "tool_call"}]),
    ToolMessage("ok", tool_call_id="t"),
]


def test_latest_human_message_text() -> None:
    assert current_intention({"order_id": "A1"}, HISTORY) == "and B2"
    assert current_intention(None, HISTORY[:3]) == "Where is order A1?"


def test_the_intention_argument_wins_unless_blank() -> None:
    assert current_intention({"intention": "status of A1"}, HISTORY) == "status of A1"
    assert current_intention({"intention": "  "}, HISTORY) == "and B2"
    assert current_intention({"why": "status of A1"}, HISTORY, intention_arg="why") == "status of A1"


def test_none_without_a_usable_human_message() -> None:
    assert current_intention({}, [SystemMessage("sys"), AIMessage("hi")]) is None
    assert current_intention({}, [HumanMessage("x"), HumanMessage("   ")]) is None  # the latest one is blank
