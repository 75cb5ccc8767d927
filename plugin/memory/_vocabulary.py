"""Word lists of the subject rules (`promptcache.memory._subjects`), and `alternation`.

Data, not logic: general English words, grouped by the role they play, written from general English usage (not
taken from any labelled set). Every entry is lower case; multi-word entries are matched with single spaces or
hyphens between the words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["ATTRIBUTE_NOUNS", "SLOT_MODIFIERS", "alternation"]


def _words(text: str) -> tuple[str, ...]:
    """``"a, b c, d"`` -> ``("a", "b c", "d")`` (a comma-separated list; order kept, duplicates dropped)."""
    return tuple(dict.fromkeys(w.strip() for w in text.split(",") if w.strip()))


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of ``words`` (longest first; a space inside an entry also matches a hyphen or more
    spaces), for use inside ``\\b(?:...)\\b``."""
    ordered = sorted(set(words), key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"[\s-]+") for w in ordered)


# the head noun of an attribute being stated ("my favourite colour is ...", "the release date is ...")
ATTRIBUTE_NOUNS: tuple[str, ...] = _words(
    "name, nickname, colour, color, food, drink, dish, band, song, film, movie, book, sport, language, address, "
    "email, e-mail, phone number, number, birthday, age, date, deadline, eta, time, location, city, country, "
    "hometown, timezone, time zone, employer, job, title, job title, role, position, salary, rate, price, cost, "
    "budget, status, owner, assignee, blocker, version, target, goal, plan, priority, size, height, weight, diet, allergy, major, "
    "degree, editor, ide, os, blood type, shoe size, release date, launch date, due date, start date, end date, "
    "go-live date, venue, capacity, headcount, stack, framework, region, limit, quota, sla, currency"
)


# modifiers that make a noun phrase an attribute slot holding one value at a time
SLOT_MODIFIERS: tuple[str, ...] = _words("favourite, favorite, preferred, usual, current, main, primary, default")
