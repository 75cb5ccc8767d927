"""Property-based check of the key memos: after any sequence of calls, in-place edits, appends, forks and rewinds
of a conversation, ``message_digests`` equals its definition (SHA-256 of each canonical message).

The memos (by value, and per conversation prefix by object identity) are the riskiest code of the ResponseCache:
a stale digest is a wrong cache hit. Hypothesis (derandomized: the same examples every run) drives random edit
sequences through the ways user code and LangGraph change messages: reassigning a field, editing a content list or a
tool call's arguments in place, adding ``additional_kwargs``, appending, forking a thread from a shorter history and
rewinding. Known, documented gaps (``Enum`` tool-call ids, writing to ``message.__dict__``) are not generated.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from support.digests import reference

import promptcache._message_digests as md

_words = st.text(alphabet="abc xyz", min_size=0, max_size=30)


@st.composite
def messages(draw: Any) -> list[Any]:
    out: list[Any] = [SystemMessage("system " * draw(st.integers(1, 5)))] if draw(st.booleans()) else []
    for i in range(draw(st.integers(1, 6))):
        out.append(HumanMessage(draw(_words) or "q"))
        if draw(st.booleans()):
            call = {"name": "lookup", "args": {"q": draw(_words), "n": draw(st.integers(0, 3))}, "id": f"c{i}"}
            out.append(AIMessage("", tool_calls=[call]))
            out.append(ToolMessage(draw(_words), tool_call_id=f"c{i}", name="lookup"))
        out.append(AIMessage([{"type": "text", "text": draw(_words) or "a"}]))
    return out


_ops = st.lists(
    st.tuples(
        st.sampled_from(
            ["digest", "set_content", "extend_list", "edit_args", "add_kwarg", "append", "fork", "rewind", "rename"]
        ),
        st.integers(0, 50),
        _words,
    ),
    min_size=1,
    max_size=25,
)


def _apply(op: str, n: int, text: str, convo: list[Any]) -> list[Any]:
    target = convo[n % len(convo)]
    if op == "set_content":
        target.content = text or "edited"
    elif op == "extend_list":
        if isinstance(target.content, list):
            target.content.append({"type": "text", "text": text})  # in place: same list object
        else:
            target.content = [{"type": "text", "text": text}]
    elif op == "edit_args":
        calls = [m for m in convo if isinstance(m, AIMessage) and m.tool_calls]
        if calls:
            calls[n % len(calls)].tool_calls[0]["args"]["q"] = text  # in place: same dict
    elif op == "add_kwarg":
        target.additional_kwargs[f"k{n % 3}"] = text
    elif op == "rename":
        target.name = text or None
    elif op == "append":
        return [*convo, HumanMessage(text or "more")]
    elif op == "fork":
        return list(convo[: max(1, n % len(convo))]) + [HumanMessage(f"fork {text}")]
    elif op == "rewind":
        return list(convo[: max(1, n % len(convo))])
    return convo


@settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(convo=messages(), ops=_ops)
def test_digests_always_equal_the_definition(convo: list[Any], ops: list[tuple[str, int, str]]) -> None:
    md._MEMO.clear()
    md._PREFIXES.clear()
    md._memo_size = 0
    threads = [convo]
    assert md.message_digests(convo) == reference(convo)
    for op, n, text in ops:
        convo = _apply(op, n, text, convo)
        if op in ("fork", "rewind"):
            threads.append(convo)
        for thread in threads[-2:]:  # the edited thread and the one it was forked from share message objects
            assert md.message_digests(thread) == reference(thread), (op, n, text)
