"""Numbers in an intention: one token each, with everything that changes its value.

Every part of the intention code that reads numbers (the exact key, the tokens and anchors, the meaning normal form)
reads them here, so a number is one token everywhere and two numbers of different value never look alike.

- `clean` is the text every reader starts from: Unicode NFKC, with superscripts read as a power first ("5²" ->
  "5^2", "10⁻³" -> "10^-3"; NFKC alone would give "52" and "10-3"), the minus sign U+2212 and the fraction slash
  U+2044 ("½" -> "1⁄2") as ASCII ``-`` and ``/``, and typographic apostrophes as ``'``; a dash (any character of
  Unicode category Pd: "–5", "‒1") right before a digit and not right after a word or number character as the
  sign ``-``; the decimal digits of every script (Unicode property "decimal": "٥", "५") as ASCII digits.
- `NUMBER` matches a number token: a sign (``-5``, ``+5``) where no word or number stands right before it; digits
  with ``.`` or ``,`` between digits (``1,000.50``, ``1,5``, ``1.2.3``) or a leading decimal point (``.5``, also
  right after a letter: "pay.5" is not "pay 5"); a power
  (``5^2``, ``1e-3``); a fraction or date (``1/2``, ``12/05/2026``). The value never loses a character.
- `CODE` matches a word ending in a dotted number, "v1.2.3": read as one token too (not "v1" and "2.3").
- `canonical` writes a number token in one spelling per value where that is unambiguous, and keeps its spelling
  otherwise: a leading decimal point gets its zero (``.5`` -> ``0.5``); grouping that can only be thousands is
  dropped (``1,000,000`` and ``1,000.50`` -> ``1000.50`` in English, ``1.000,50`` in German spelling); a power's
  ``E`` is written ``e`` (``1E5`` -> ``1e5``). Zeros are never removed: a leading zero is part of an identifier
  (``007``, a zip code ``02134``, a PIN ``0042`` match only themselves), and trailing zeros carry meaning in a
  version (``3.10`` is not ``3.1``), so ``1.50`` matches ``1.50`` only. A single ``,`` (``1,5`` is a decimal
  in comma locales, or a list; ``1,000`` is a thousand in English, or one in comma locales), a single ``.``
  before exactly three digits (``1.500``: one and a half, or fifteen hundred), two or more dots (``1.2.3``, a
  version or a date), a sign, a power and a fraction are kept as written: such a number matches the same spelling
  only, and never a number of another value.
- `roman` reads a word that is a Roman numeral ("ii", "XIV", "mmxxiv") as its value, by a rule stated there:
  "chapter ii" is not "chapter iii", "World War II" is "World War 2".
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["CODE", "NUMBER", "canonical", "clean", "is_number", "roman", "roman_numeral"]

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")
_SUPERSCRIPT_RUN = re.compile(r"[⁺⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_SIGNS = str.maketrans({"−": "-", "⁄": "/", "’": "'", "‘": "'"})
_DASH_BEFORE_DIGIT = re.compile(r"(?<![\w.,])[^\w\s](?=\d)")  # Pd is checked on the match
_DIGIT = re.compile(r"\d")  # Unicode: every character with a decimal value

NUMBER = (
    r"(?:(?<![\w.,])[-+])?(?:\d+(?:[.,]\d+)*|\.\d+)"  # a sign; digits and separators, or ".5"
    r"(?:(?:\^|[eE](?=[-+]?\d))[-+]?\d+)?"  # a power: 5^2, 1e-3
    r"(?:/\d+(?:[.,]\d+)*)*"  # a fraction or a date: 1/2, 12/05/2026
)
"""The regular expression of a number token (see the module docstring)."""
CODE = r"[^\W\d_]+\d+(?:[.,]\d+)+"
"""A word ending in a dotted number ("v1.2.3", "A3.5"): one token, a code, not a word and a number."""
_NUMBER_RE = re.compile(NUMBER)
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+")  # English thousands: 1,000 / 12,345,678
_GROUPED_DOTS = re.compile(r"\d{1,3}(?:\.\d{3})+")  # German thousands: 1.000 / 12.345.678


def clean(text: str) -> str:
    """``text`` as every intention reader sees it (see the module docstring)."""
    text = _SUPERSCRIPT_RUN.sub(lambda m: "^" + m.group(0).translate(_SUPERSCRIPTS), text)
    text = unicodedata.normalize("NFKC", text).translate(_SIGNS)
    if not text.isascii():
        text = _DIGIT.sub(lambda m: str(unicodedata.decimal(m.group(0))), text)
        text = _DASH_BEFORE_DIGIT.sub(_sign, text)
    return text


def _sign(match: re.Match[str]) -> str:
    mark = match.group(0)
    return "-" if unicodedata.category(mark) == "Pd" else mark


def is_number(token: str) -> bool:
    """Whether a token of `clean` text is a number token (`NUMBER`)."""
    return _NUMBER_RE.fullmatch(token) is not None


def _decimal(whole: str, frac: str) -> str:
    return f"{whole or '0'}.{frac}"


def canonical(token: str) -> str:
    """One spelling per value for a number token, where the value is unambiguous (see the module docstring)."""
    if not all(c.isdigit() or c in ".," for c in token):
        return token.casefold()  # a sign, a power, a fraction: as written ("1E5" is "1e5")
    if token.isdigit() or token[:1] == "0" and token[1:2].isdigit():
        return token  # digits as written; a leading zero: an identifier ("007", "02134")
    dots, commas = token.count("."), token.count(",")
    if commas == 0 and dots == 1:
        whole, frac = token.split(".")
        if len(frac) == 3 and whole:
            return token  # 1.500: a decimal in English, fifteen hundred in German
        return _decimal(whole, frac)
    if commas >= 2 and dots == 0 and _GROUPED.fullmatch(token):
        return token.replace(",", "")
    if commas >= 1 and dots == 1 and token.index(",") < token.index("."):
        grouped, frac = token.split(".")
        if _GROUPED.fullmatch(grouped):
            return _decimal(grouped.replace(",", ""), frac)  # 1,000.50
    if dots >= 1 and commas == 1 and token.index(".") < token.index(","):
        grouped, frac = token.split(",")
        if _GROUPED_DOTS.fullmatch(grouped):
            return _decimal(grouped.replace(".", ""), frac)  # 1.000,50
    return token


_ROMAN_VALUES: Final[tuple[tuple[int, str], ...]] = (
    *((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL")),
    *((10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")),
)
_ROMAN_LETTER = {"M": 1000, "D": 500, "C": 100, "L": 50, "X": 10, "V": 5, "I": 1}
ROMAN_ALWAYS_LETTERS: Final = 4
"""A well-formed numeral of at least this many letters is a number whatever its letters: no English word of four
letters or more is one (the shorter ones with L, C, D or M are: "mix", "mi", "cd", "cm", "mm", "ml", "dl", "cc",
"civ", "dc", "md", "xl"). Checked by reading the list of every numeral of four letters or more from 1 to 3999
(`roman_numeral`): all are strings of consonants and "i" such as "xlii", "mcmx", "lviii"."""


def roman_numeral(value: int) -> str:
    """The standard (subtractive) Roman numeral of ``value``, 1 to 3999: 4 -> "IV", 1994 -> "MCMXCIV".

    Raises:
        ValueError: ``value`` outside 1..3999 (the standard form has no numeral for it).
    """
    if not 1 <= value <= 3999:
        raise ValueError(f"a Roman numeral needs a value from 1 to 3999, got {value}")
    out = []
    for size, letters in _ROMAN_VALUES:
        count, value = divmod(value, size)
        out.append(letters * count)
    return "".join(out)


def roman(token: str) -> int | None:
    """The value of a word read as a Roman numeral, else ``None``.

    A word is a numeral when it is well formed in the standard subtractive notation (each letter's value added,
    a smaller one before a larger subtracted, and the word equal to `roman_numeral` of that value, in any case:
    "iv", "IV", "mcmxciv"; "iiii", "vx", "ic" and "dim" are not numerals). Such a word is read as a number when it
    is unambiguous:

    - it has two letters or more and only the letters I, V and X ("ii", "iv", "xiv", "XXXIX": 2 to 39): chapter,
      part, volume, act and regnal numbers; the English words among them ("vi", "xi", "iv") then read as a number
      too, which only ever joins them with their own digits and sets them apart from every other word;
    - or it has `ROMAN_ALWAYS_LETTERS` letters or more ("lviii", "mmxxiv", "MCMXCIV").

    Never a number: a single letter ("I" is the pronoun, "x" a times sign or a variable, "c", "m", "l", "d" units
    or initials, "v" "versus"), and a numeral of two or three letters holding L, C, D or M ("cm", "mm", "ml",
    "dl", "cc", "cd", "mi", "mix", "CV", "DC", "MD", "XL", "CLI": units, sizes and abbreviations; the all-caps ones
    are names the ``numbers`` veto already requires on both sides). The rule uses no word list: the letters and the
    length decide. Source of the notation: the standard modern form (the subtractive pairs IV, IX, XL, XC, CD
    and CM only, no letter more than three times in a row), which the round trip through `roman_numeral` checks.
    """
    if not token.isalpha() or not token.isascii():
        return None
    upper = token.upper()
    if len(upper) < 2 or any(c not in _ROMAN_LETTER for c in upper):
        return None
    if len(upper) < ROMAN_ALWAYS_LETTERS and set(upper) - set("IVX"):
        return None
    values = [_ROMAN_LETTER[c] for c in upper]
    value = sum(-v if v < nxt else v for v, nxt in zip(values, values[1:] + [0]))
    if not 1 <= value <= 3999 or roman_numeral(value) != upper:
        return None
    return value
