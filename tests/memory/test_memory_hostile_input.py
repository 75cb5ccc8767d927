"""Hostile input for typed memory: odd message contents in the state, huge messages, subject derivation that would
wrongly replace a memory (two attributes collapsed into one subject), and scope / namespace injection."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.store.memory import InMemoryStore

from integrations.langgraph import MemoryNode
from promptcache.memory import TypedMemoryStore
from promptcache.memory._classifier import ChatModelClassifier, as_turns, is_conceptual_question
from promptcache.memory._policy import conversation
from promptcache.memory._subjects import ChatModelSubjectExtractor, derive_subject
from promptcache.testing import ScriptedChatModel

# --- odd message contents -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([], ("", [])),
        ([{"role": "user", "content": None}], ("", [])),
        ([{"role": "user", "content": [{"type": "text", "text": None}, 5, None]}], ("", [])),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}], ("", [])),
        (
            [{"role": "user", "content": [{"type": "text", "text": "What is RAG?"}, {"type": "text", "text": 7}]}],
            ("What is RAG?", []),
        ),
        ([None, "hi", 5, {"role": None}], ("", [])),
        (
            [
                HumanMessage("Where is order 42?"),
                AIMessage("", tool_calls=[{"name": "find", "args": {}, "id": "c1"}]),
                ToolMessage("shipped", tool_call_id="c1"),
                AIMessage([{"type": "text", "text": "It shipped."}]),
                SystemMessage("ignored"),
                HumanMessage([{"type": "text", "text": "And"}, {"type": "text", "text": "when?"}]),
            ],
            ("And when?", [("user", "Where is order 42?"), ("assistant", "It shipped.")]),
        ),
    ],
)
def test_conversation_reads_odd_contents_without_inventing_text(messages, expected):
    assert conversation(messages) == expected


def test_history_turns_with_null_text_are_empty_not_none():
    assert as_turns([{"role": "user", "content": None}, {"role": "assistant", "content": [{"text": None}]}]) == [
        ("user", ""),
        ("assistant", ""),
    ]


def test_a_huge_message_is_decided_at_once_and_loads():
    """A pasted document is not a one-line general-knowledge question; the rules do not walk all of it."""
    huge = "What is " + "a " * 200_000 + "?"
    assert is_conceptual_question(huge) is False
    assert is_conceptual_question("What is photosynthesis?", history=[huge] * 8) is True


def _node_memory() -> TypedMemoryStore:
    memory = TypedMemoryStore(InMemoryStore())
    memory.put("u1", "feedback", "Keep answers short.")
    memory.put("u1", "project_state", "Release 2.3 ships on 12 May.", subject="release 2.3 date")
    return memory


@pytest.mark.parametrize(
    ("messages", "question", "read"),
    [
        ([], "", ["feedback", "user_fact", "reference", "project_state"]),
        (
            [HumanMessage([{"type": "image_url", "image_url": {"url": "data:,"}}])],
            "",
            ["feedback", "user_fact", "reference", "project_state"],
        ),
        (
            [HumanMessage("What is photosynthesis?"), AIMessage(""), ToolMessage("x", tool_call_id="t")],
            "What is photosynthesis?",
            ["feedback", "user_fact", "reference"],
        ),
        (
            [HumanMessage("\u202eWhat is photosynthesis?\u200b")],
            "\u202eWhat is photosynthesis?\u200b",
            ["feedback", "user_fact", "reference"],  # invisible format characters do not hide the question
        ),
    ],
)
def test_memory_node_on_hostile_states(messages, question, read):
    node = MemoryNode(_node_memory(), scope="u1")
    update = node.invoke({"messages": messages})
    conceptual = "project_state" not in read  # the only skip the policy makes
    assert update["memory_turn"] == {"question": question, "conceptual": conceptual, "read": read}
    assert "Keep answers short." in update["memory_prompt"]


# --- subject derivation must not merge two attributes -------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("My manager's name is Alex.", "My name is Sam."),
        ("The release date is 12 May.", "The release date of v2 is 2 June."),
        ("My wife's birthday is 2 May.", "My birthday is 1 June."),
        ("His name is Bob.", "His name is Tom."),  # "his" names someone the memory does not
        ("Her email is a@x.com.", "Her email is b@y.com."),
        ("Their deadline is Friday.", "Their deadline is Monday."),
        ("My name is Sam, my age is 40.", "My name is Kim."),
        ("My name is Sam: my age is 40.", "My name is Kim."),
        ("My name is Sam (my age is 40).", "My name is Kim."),
        ("My name is Sam - my age is 40.", "My name is Kim."),
        ("My name is Sam / my age is 40.", "My name is Kim."),
        ("My name is Sam. my age is 40.", "My name is Kim."),
        ("My name is Sam\nMy age is 40", "My name is Kim."),
        ("My name is Sam\u2028My age is 40", "My name is Kim."),
        ("The deadline is Friday for the API.", "The deadline is Monday for the web app."),
        ("The release date is 3 May for v2.", "The release date is 9 June for v3."),
    ],
)
def test_two_different_attributes_are_both_kept(first, second):
    memory = TypedMemoryStore(InMemoryStore(), clock=iter(range(100, 200)).__next__)
    kind = "project_state" if "release" in first or "deadline" in first else "user_fact"
    memory.put("u1", kind, first)
    memory.put("u1", kind, second)
    assert sorted(m.content for m in memory.list("u1", kind)) == sorted([first, second])


@pytest.mark.parametrize(
    ("content", "subject"),
    [
        ("His name is Bob.", None),
        ("Their deadline is Friday.", None),
        ("My name is Sam, my age is 40.", None),
        ("My name is Sam\nMy age is 40", None),
        ("The deadline is Friday for the API.", None),
        # still derived: one attribute, one value (a qualified attribute's value may say "of" or "for")
        ("The status of release 2.3 is rolled out to 10% of merchants.", "status of release 2.3"),
        ("My name is Sam.", "user: name"),
        ("My manager's name is Alex.", "user: manager's name"),
        ("The release date of v2 is 2 June.", "release date of v2"),
        ("Dana's email is d@x.com.", "dana: email"),
    ],
)
def test_derive_subject_on_hostile_shapes(content, subject):
    kind = "project_state" if "release" in content or "deadline" in content else "user_fact"
    assert derive_subject(content, kind) == subject


def test_chat_model_replies_as_content_blocks_are_read_as_their_text():
    blocks = [
        {"type": "thinking", "thinking": "The user states a colour."},
        {"type": "text", "text": "user: favourite colour"},
    ]
    extractor = ChatModelSubjectExtractor(ScriptedChatModel(replies=[AIMessage(blocks)]))
    assert extractor("My favourite colour is blue.", "user_fact") == "user: favourite colour"
    verdict = [{"type": "text", "text": None}, {"type": "text", "text": "conceptual"}]
    classifier = ChatModelClassifier(ScriptedChatModel(replies=[AIMessage(verdict)]))
    assert classifier("What is the offside rule?") is True


def test_a_restatement_still_replaces():
    memory = TypedMemoryStore(InMemoryStore(), clock=iter(range(100, 200)).__next__)
    memory.put("u1", "user_fact", "My name is Sam.")
    memory.put("u1", "user_fact", "My name is Kim.")
    assert [m.content for m in memory.list("u1", "user_fact")] == ["My name is Kim."]


# --- scope / namespace injection ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scope", "error", "message"),
    [
        ("u1.feedback", ValueError, "namespace separator"),
        ("", ValueError, "non-empty"),
        ("   ", ValueError, "non-empty"),
        ("u\x00", ValueError, "NUL"),
        ("\ud800", ValueError, "lone surrogate"),
        (["u1"], TypeError, "must be a string or None"),
        (True, TypeError, "must be a string or None"),
        (1.5, TypeError, "must be a string or None"),
    ],
)
def test_bad_scopes_are_refused_before_anything_is_written(scope, error, message):
    raw = InMemoryStore()
    memory = TypedMemoryStore(raw)
    with pytest.raises(error, match=message):
        memory.put(scope, "user_fact", "My name is Sam.")
    assert raw.list_namespaces() == []
    with pytest.raises(error, match=message):
        MemoryNode(memory, scope=scope)


def test_per_call_scope_injection_is_refused_before_any_read():
    memory = _node_memory()
    node = MemoryNode(memory)
    bad = {"configurable": {"promptcache.memory": {"scope": "u1.feedback"}}}
    with pytest.raises(ValueError, match="namespace separator"):
        node.invoke({"messages": [HumanMessage("hi")]}, bad)
    with pytest.raises(ValueError, match="unknown per-call option"):
        node.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"promptcache.memory": {"prefix": "x"}}})
    with pytest.raises(TypeError, match="must be a dict of per-call options"):
        node.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"promptcache.memory": "u1"}})
    # a user id that spells another scope's namespace is refused, not read as that namespace
    with pytest.raises(ValueError, match="namespace separator"):
        node.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"user_id": "u1.project_state"}})


def test_scopes_that_look_alike_stay_apart():
    memory = TypedMemoryStore(InMemoryStore())
    memory.put("u1", "user_fact", "My name is Sam.")
    memory.put("U1", "user_fact", "My name is Kim.")
    memory.put("u1 ", "user_fact", "My name is Lee.")
    memory.put("\uff55\uff11", "user_fact", "My name is Ann.")  # fullwidth "u1"
    assert [m.content for m in memory.list("u1", "user_fact")] == ["My name is Sam."]
    assert [m.content for m in memory.list("U1", "user_fact")] == ["My name is Kim."]
    assert [m.content for m in memory.list("\uff55\uff11", "user_fact")] == ["My name is Ann."]
