"""Change sentences: a memory that says a fact changed replaces the memories holding the old fact.

"We run PostgreSQL 14" then "We moved from Postgres 14 to 16": the second says the first is no longer true, though
neither states an attribute the subject rules can name (`promptcache.memory._subjects`). `change_of`
reads the shapes English uses to report a change:

- ``... moved / migrated / switched / upgraded / changed / went / downgraded from <old> to <new>``;
- ``<new> replaced <old>`` and ``<old> was / has been replaced by / with <new>``;
- ``... now on / now using / now running / now use / now run <new>`` and ``... switched / moved to <new>``.

The *thing* that changed is named by the first word of ``<old>`` (else of ``<new>``) after determiners ("the",
"our", ...): a word of letters ("postgres" in "Postgres 14"). `stale_by_change` then picks, among the
memories of the same scope and kind written without a subject, the ones that mention that thing: a word equal to
it, or one of them a prefix of the other of at least `MIN_PREFIX` letters ("postgres" / "postgresql"), so a
product's short and long names match. A memory that is itself a change sentence about the thing is stale too (the
newer change wins).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from promptcache.memory._records import StoredItem, stored_values

__all__ = ["MIN_PREFIX", "Change", "change_of", "stale_by_change"]

MIN_PREFIX = 4
"""Shortest name a prefix match accepts ("pg" must not match "pgbouncer"; "postgres" matches "postgresql")."""

_FROM_TO = re.compile(
    r"\b(?:moved|migrated|switched|upgraded|changed|went|downgraded|transitioned|shifted)\s+"
    r"(?:\w+\s+)?from\s+(?P<old>.+?)\s+(?:to|onto)\s+(?P<new>.+)$",
    re.I,
)
_REPLACED = re.compile(r"^(?P<new>.+?)\s+(?:has\s+|have\s+)?replaced\s+(?P<old>.+)$", re.I)
_REPLACED_BY = re.compile(
    r"^(?P<old>.+?)\s+(?:was|were|has been|have been|is|got)\s+replaced\s+(?:by|with)\s+(?P<new>.+)$", re.I
)
_NOW_ON = re.compile(
    r"\bnow\s+(?:on|using|running|use|run|uses|runs|moved to|switched to)\s+(?P<new>.+)$|"
    r"\b(?:switched|moved|migrated|upgraded)\s+(?:\w+\s+)?(?:to|onto)\s+(?P<new2>.+)$",
    re.I,
)
_DETERMINERS = frozenset("the a an our my their his her its this that these those".split())
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+#-]*|\d+(?:\.\d+)*")


class Change(NamedTuple):
    """A change sentence's parts: ``thing`` (lower case), ``old`` and ``new`` (the texts, ``old`` may be "")."""

    thing: str
    old: str
    new: str


def _name(phrase: str) -> str:
    words: list[str] = _WORD.findall(phrase)
    for word in words:
        low = word.lower()
        if low in _DETERMINERS or not low[0].isalpha():
            continue
        return low
    return ""


def change_of(content: str) -> Change | None:
    """The change ``content`` reports (module docstring), or ``None`` when it is not a change sentence or names
    no thing."""
    text = " ".join(content.split()).rstrip(".!;: ")
    for pattern in (_FROM_TO, _REPLACED_BY, _REPLACED):
        match = pattern.search(text)
        if match:
            old, new = match.group("old"), match.group("new")
            thing = _name(old) or _name(new)
            return Change(thing, old, new) if thing else None
    match = _NOW_ON.search(text)
    if match:
        new = match.group("new") or match.group("new2")
        thing = _name(new)
        return Change(thing, "", new) if thing else None
    return None


def _mentions(text: str, thing: str) -> bool:
    words: list[str] = _WORD.findall(text)
    for word in words:
        low = word.lower()
        if low == thing:
            return True
        short, long_ = sorted((low, thing), key=len)
        if len(short) >= MIN_PREFIX and long_.startswith(short):
            return True
    return False


def stale_by_change(content: str, key: str, existing: Iterable[StoredItem]) -> list[str]:
    """The keys of the memories in ``existing`` (store items: ``key``, ``value``) that the change sentence
    ``content`` (stored under ``key``) makes stale: written without a subject and mentioning the changed thing
    (module docstring). ``[]`` when ``content`` is not a change sentence."""
    change = change_of(content)
    if change is None:
        return []
    out = []
    for item_key, value in stored_values(existing):
        text = value.get("content")
        if item_key == key or value.get("subject") or not isinstance(text, str):
            continue
        if _mentions(text, change.thing):
            out.append(item_key)
    return out
