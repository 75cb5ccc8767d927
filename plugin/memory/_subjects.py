"""Derive a memory's subject (the attribute it states) from its text, so a restatement replaces the older memory.

"My favourite colour is blue." then "My favourite colour is green." are two values of one attribute of the user;
with a subject both land on one key (`promptcache.memory._records.memory_key`) and the newer replaces the
older. `derive_subject` finds that attribute for user facts and project state written without a subject,
conservatively: it returns ``None`` (keep both memories, the behaviour without a subject) unless the text is one
statement of one of these shapes:

- ``<owner> <attribute> is/are/was/were/is now/has changed to/will be <value>``, where the owner is a possessive
  (my, our, the user's, Dana's) or ``the``, and the attribute is a noun phrase of at most four
  words (optionally with an ``of``/``for`` qualifier: "the release date of version 4") whose head is an attribute
  noun ("name", "colour", "release date", "deadline", "employer": `
  ATTRIBUTE_NOUNS`) or that starts with a slot modifier ("favourite", "current", "preferred", "usual":
  `SLOT_MODIFIERS`);
- ``I work at/for <value>`` (employer), ``I live in / I moved to <value>`` (home), ``I am <n> years old`` (age),
  ``I'm based in <value>`` (location).

Not when the text holds more than one line, sentence or clause (";", ", my ...", "(my ...)", " - the ...", " and my
...", " but ..."), a negated value ("is not blue"), a question, a hedge ("maybe", "probably", "I think"), a pronoun
owner ("his name", "their deadline": whose is not in the memory, so two people's names would be one subject) or a
qualifier after the value of an unqualified attribute ("The deadline is Friday for the API": which deadline is
named after it, so each thing's deadline would be one subject; "The status of release 2.3 is rolled out to 10% of
merchants" is qualified already): those keep both. The subject is the owner and the
attribute, normalised (case, whitespace, British/American spellings of the slot words): ``"user: favourite
colour"``, ``"release date of version 4"``. A chat model can do the same job better
(`ChatModelSubjectExtractor`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from promptcache._log import ThrottledWarning, get_logger
from promptcache.memory._changes import stale_by_change
from promptcache.memory._classifier import content_text
from promptcache.memory._kinds import MemoryKind
from promptcache.memory._records import StoredItem, TypedMemory, memory_key, resolve_duplicates, validate_subject
from promptcache.memory._vocabulary import ATTRIBUTE_NOUNS, SLOT_MODIFIERS, alternation

__all__ = [
    "SUBJECT_KINDS",
    "ChatModelSubjectExtractor",
    "awith_derived_subject",
    "SubjectExtractor",
    "derive_subject",
    "make_subject_extractor",
    "superseded",
    "with_derived_subject",
]

SubjectExtractor = Callable[[str, MemoryKind], "str | None"]
"""``(content, kind) -> subject or None`` (None: no subject; the memory is keyed by its content)."""

SUBJECT_KINDS: frozenset[MemoryKind] = frozenset({MemoryKind.USER_FACT, MemoryKind.PROJECT_STATE})
"""The kinds whose subject is derived when none is given (feedback rules and references are kept by content)."""

_SPELLING = {
    "favorite": "favourite",
    "color": "colour",
    "colors": "colours",
    "e-mail": "email",
    "timezone": "time zone",
}
_OWNERS = {"my": "user", "the user's": "user", "our": "team", "the team's": "team", "the": ""}
_COPULA = r"(?:is now|are now|is|are|was|were|has changed to|have changed to|has become|will be|'s)"
_ATTR_HEAD = re.compile(rf"(?:^|\s)(?:{alternation(ATTRIBUTE_NOUNS)})$", re.I)
_SLOT_FIRST = re.compile(rf"^(?:{alternation(SLOT_MODIFIERS)})\s", re.I)
_ATTRIBUTE = re.compile(
    rf"^(?P<owner>my|our|his|her|their|the user's|the team's|the|[A-Z][\w-]*'s)\s+"
    rf"(?P<attr>(?:[\w'-]+\s+){{0,3}}?[\w'-]+(?:\s+(?:of|for)\s+(?:the\s+)?[\w.'-]+(?:\s+[\w.'-]+)?)?)\s+"
    rf"{_COPULA}\s+(?P<value>\S.*)$",
    re.I,
)
_FIRST_PERSON = (
    (re.compile(r"^i(?:'m| am)? (?:now )?(?:work|working) (?:at|for)\s+\S", re.I), "employer"),
    (re.compile(r"^i (?:now )?(?:live|am living|moved) (?:in|to)\s+\S|^i'm living in\s+\S", re.I), "home"),
    (re.compile(r"^i(?:'m| am) \d{1,3} years? old\b", re.I), "age"),
    (re.compile(r"^i(?:'m| am) (?:now )?based in\s+\S", re.I), "location"),
)
_UNSURE = re.compile(
    r";|\?|\b(?:and|but|while|whereas)\s+(?:my|our|the|i|we|his|her|their)\b|\b(?:maybe|perhaps|probably|possibly|"
    r"might|i think|i guess|not sure|unsure|either)\b|^(?:not|no longer|never|isn't|aren't)\b",
    re.I,
)
_SENTENCE_END = re.compile(r"[.!]\s+\w")
# a second clause after clause punctuation ("My name is Sam, my age is 40", "... (my age is 40)", "... - my age")
_SECOND_CLAUSE = re.compile(
    r"(?:[,:;()/\[\]\u2013\u2014]|\s-\s)\s*(?:my|our|his|her|their|the|i|i'm|we|[A-Z][\w-]*'s)\b", re.I
)
# a qualifier after the value names which thing it is ("The deadline is Friday for the API"): another attribute
_TRAILING_QUALIFIER = re.compile(r"\s(?:for|of)\s", re.I)
_LINE_BREAK = re.compile(r"[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
_PRONOUN_OWNERS = frozenset({"his", "her", "their"})


def _normalise(words: str) -> str:
    return " ".join(_SPELLING.get(w, w) for w in words.lower().split())


def derive_subject(content: str, kind: MemoryKind | str = MemoryKind.USER_FACT) -> str | None:
    """The attribute ``content`` states, as a subject string, or ``None`` when unsure (module docstring).

    Args:
        content: the memory text (one statement).
        kind: a user fact or project state (other kinds -> ``None``).

    Raises:
        TypeError: ``content`` is not a string.
    """
    if not isinstance(content, str):
        raise TypeError(f"content must be a string, got {type(content).__name__}: {content!r}")
    if MemoryKind(kind) not in SUBJECT_KINDS:
        return None
    if _LINE_BREAK.search(content.strip()):
        return None  # two lines are two statements, whatever their punctuation
    text = " ".join(content.replace("\u2019", "'").split()).rstrip(".!")
    if not text or _SENTENCE_END.search(text) or _SECOND_CLAUSE.search(text):
        return None
    for pattern, attribute in _FIRST_PERSON:
        if pattern.match(text):
            return None if _UNSURE.search(text) else f"user: {attribute}"
    match = _ATTRIBUTE.match(text)
    if match is None or _UNSURE.search(match.group("value")) or _UNSURE.search(match.group("attr")):
        return None
    if match.group("owner").lower() in _PRONOUN_OWNERS:
        return None  # "his name": whose name is not in the memory
    if not _TRAILING_QUALIFIER.search(match.group("attr")) and _TRAILING_QUALIFIER.search(match.group("value")):
        return None  # "The deadline is Friday for the API": which deadline is named after the value
    attr = _normalise(match.group("attr"))
    head = re.split(r"\s+(?:of|for)\s+", attr, maxsplit=1)[0]
    if not (_ATTR_HEAD.search(head) or _SLOT_FIRST.match(head + " ")):
        return None
    owner_word = match.group("owner").lower()
    owner = _OWNERS.get(owner_word, owner_word.removesuffix("'s"))
    return f"{owner}: {attr}" if owner else attr


_SYSTEM = (
    "A memory about a user or their project is given. If it states the value of exactly one attribute (e.g. 'My "
    "favourite colour is blue' -> 'user: favourite colour'; 'The release date is May 3' -> 'release date'), "
    "answer with that attribute as a short lower-case noun phrase, prefixed with 'user: ' when it is about the "
    "user. Otherwise (several facts, an event, an opinion, unsure) answer exactly 'none'."
)
_extractor_failed = ThrottledWarning(get_logger("promptcache.memory"))
_CONFIG: RunnableConfig = {"tags": ["nostream", "promptcache:memory-subject"]}


class ChatModelSubjectExtractor:
    """A chat model that names the attribute a memory states (one short call per write without a subject).

    Args:
        model: a LangChain ``BaseChatModel``; an answer of "none" (or empty, or over 80 characters) -> no subject.
        fallback: used when the call fails (default `derive_subject`); logged, throttled.
    """

    def __init__(self, model: BaseChatModel, fallback: SubjectExtractor = derive_subject) -> None:
        self.model = model
        self.fallback = fallback

    @staticmethod
    def _parse(reply: BaseMessage) -> str | None:
        text = content_text(reply.content)  # the text blocks of a reply, not the repr of its block list
        text = " ".join(text.strip().strip("'\".").split()).lower()
        return None if not text or text == "none" or len(text) > 80 else text

    def __call__(self, content: str, kind: MemoryKind) -> str | None:
        if MemoryKind(kind) not in SUBJECT_KINDS:
            return None
        try:
            return self._parse(self.model.invoke([SystemMessage(_SYSTEM), HumanMessage(content)], config=_CONFIG))
        except Exception as exc:  # noqa: BLE001 - a failing extractor must not lose the write
            _extractor_failed.warn("the subject extractor model failed; using the rules", exc=exc)
            return self.fallback(content, kind)

    async def acall(self, content: str, kind: MemoryKind) -> str | None:
        """Async twin of ``__call__`` (``ainvoke``)."""
        if MemoryKind(kind) not in SUBJECT_KINDS:
            return None
        try:
            reply = await self.model.ainvoke([SystemMessage(_SYSTEM), HumanMessage(content)], config=_CONFIG)
            return self._parse(reply)
        except Exception as exc:  # noqa: BLE001
            _extractor_failed.warn("the subject extractor model failed; using the rules", exc=exc)
            return self.fallback(content, kind)


def with_derived_subject(record: TypedMemory, extractor: SubjectExtractor | None) -> TypedMemory:
    """``record`` keyed by the subject ``extractor`` derives from its content, when it has no subject and is of a
    `SUBJECT_KINDS` kind; else ``record`` itself. An extractor that raises, or returns something that is not a
    usable subject, leaves the record as it is (logged, throttled): a write never fails for it."""
    if extractor is None or record.subject is not None or record.kind not in SUBJECT_KINDS:
        return record
    try:
        subject = validate_subject(extractor(record.content, record.kind))
    except Exception as exc:  # noqa: BLE001 - the write goes ahead, keyed by content
        _extractor_failed.warn("the subject extractor failed; keeping the memory keyed by its content", exc=exc)
        return record
    if subject is None:
        return record
    return replace(record, id=memory_key(record.content, subject), subject=subject)


async def awith_derived_subject(record: TypedMemory, extractor: SubjectExtractor | None) -> TypedMemory:
    """Async `with_derived_subject`: awaits the extractor's ``acall`` when it has one (a chat model's
    ``ainvoke``), so ``aput`` does not block the event loop on a model call."""
    acall = getattr(extractor, "acall", None)
    if acall is None or record.subject is not None or record.kind not in SUBJECT_KINDS:
        return with_derived_subject(record, extractor)
    try:
        subject = await acall(record.content, record.kind)
    except Exception as exc:  # noqa: BLE001 - the write goes ahead, keyed by content
        _extractor_failed.warn("the subject extractor failed; keeping the memory keyed by its content", exc=exc)
        return record
    return with_derived_subject(record, lambda content, kind: subject)


def superseded(
    record: TypedMemory, existing: Iterable[StoredItem], extractor: SubjectExtractor | None
) -> tuple[TypedMemory, list[str]]:
    """`resolve_duplicates`, plus: a record without a subject that reports a
    change ("we moved from X to Y", "X replaced Y", "now on Y": `promptcache.memory._changes`) deletes the
    subject-less memories that mention the changed thing (with any extractor but ``None``); and when ``record``'s subject is one the rules
    derive (``extractor`` is `derive_subject`), the existing memories *without* a subject whose text the
    rules give the same subject are deleted too -- e.g. ones written before subjects were derived, or with
    ``subject_extractor=False``. (With another extractor only the subject keys decide: re-asking a model about
    every stored memory on each write would cost a call per memory.)

    Returns the record to write and the store keys to delete.
    """
    items = list(existing)
    record, stale = resolve_duplicates(record, items)
    if extractor is not None and record.subject is None and record.kind in SUBJECT_KINDS:
        # "We moved from Postgres 14 to 16" replaces "We run PostgreSQL 14" (promptcache.memory._changes)
        stale += [k for k in stale_by_change(record.content, record.id, items) if k not in stale]
    if extractor is not derive_subject or record.subject is None or record.kind not in SUBJECT_KINDS:
        return record, stale
    for it in items:
        value = it.value if isinstance(it.value, Mapping) else {}
        content = value.get("content")
        if it.key == record.id or it.key in stale or value.get("subject") or not isinstance(content, str):
            continue
        if derive_subject(content, record.kind) == record.subject:
            stale.append(it.key)
    return record, stale


def make_subject_extractor(extractor: object) -> SubjectExtractor | None:
    """``True``/``None`` -> `derive_subject`; ``False`` -> no derivation; a chat model ->
    `ChatModelSubjectExtractor`; a callable ``(content, kind) -> str | None`` -> itself.

    Raises:
        TypeError: anything else.
    """
    if extractor is None or extractor is True:
        return derive_subject
    if extractor is False:
        return None
    if isinstance(extractor, BaseChatModel):
        return ChatModelSubjectExtractor(extractor)
    if callable(extractor):
        given: SubjectExtractor = extractor
        return given
    raise TypeError(f"subject_extractor must be a bool, a callable(content, kind) or a chat model, got {extractor!r}")
