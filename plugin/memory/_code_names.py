"""Names of the user's code in a question: files, paths, functions, classes, identifiers, services.

A question that names code ("what does retry.py do on a 429?", "explain batch_commit() in ledger-worker", "why is
InvoiceSerializer so slow?") is about the user's work whatever its form, so the load decision never skips project
state for it. The shapes are the naming conventions of source code, not words of any data set:

- ``file``: a file name with an extension of letters (``retry.py``, ``settings.yaml``, ``main.go``) or a dotted
  name (``os.path``, ``LedgerEntry.reverse``); not a number (``3.14``) and not an abbreviation with dots
  (``e.g.``, ``U.S.``: every part one letter);
- ``path``: ``a/b`` with no spaces, or a leading ``./`` / ``~/`` / ``/`` followed by a name;
- ``call``: ``name()`` or ``name(args)`` directly after the name;
- ``snake_case``, ``SCREAMING_CASE`` (an underscore between word characters), ``camelCase`` / ``PascalCase``
  (a lower-case letter followed by an upper-case one inside a word of 5+ characters with 2+ capitals or a lower
  case start: ``fetchOrders``, ``InvoiceSerializer``; not ``iPhone``-like brand names of one hump after the first
  letter... these still count: loading for them only costs tokens);
- ``flag``: a command-line flag (``--dry-run``);
- ``backticks``: anything in backticks;
- ``project_file``: a conventional file name of a source tree without an extension (`PROJECT_FILES`:
  ``Makefile``, ``README``, ``Dockerfile``, ...) that is not after ``a`` / ``an``: "why does the Makefile rebuild
  everything" and "the base image in Dockerfile" name the user's file, while "what is a Makefile" asks what such
  files are;
- ``identifier``: a tracked item's id, an upper-case key of two or more letters and a number with a space,
  hyphen or ``#`` between (``ADR 42``, ``INC-4411``, ``PR #512``: issue-tracker keys, decision records, incidents),
  or ``#`` and a number alone (``#4411``). Public ones ("RFC 9110", "COVID-19") match too: loading for them
  only costs tokens;
- ``service``: a kebab-case name of two or more lower-case parts whose last part is a software role
  (`SERVICE_ROLES`: ``payments-api``, ``ledger-worker``), or of three or more parts
  (``reconcile-payouts-job``). Two-part hyphenated English words ("long-term", "x-ray") are not names.
"""

from __future__ import annotations

import re

__all__ = ["PROJECT_FILES", "SERVICE_ROLES", "code_names"]

SERVICE_ROLES: frozenset[str] = frozenset(
    "api app bot cli client daemon db gateway job lambda proxy queue relay server service svc sync ui web "
    "worker indexer consumer producer scheduler".split()
)
"""Last parts of kebab-case service names: the roles a deployable component is named after (software naming
convention: "<domain>-<role>")."""

PROJECT_FILES: frozenset[str] = frozenset(
    "makefile gnumakefile dockerfile containerfile jenkinsfile vagrantfile procfile gemfile rakefile pipfile "
    "brewfile justfile caddyfile readme changelog codeowners".split()
)
"""File names a source tree holds by convention, without an extension, matched in any case: build tools' default
input files (make, Docker/Podman, Jenkins, Vagrant, Heroku, Bundler, Rake, Pipenv, Homebrew, just, Caddy) and the
repository documents hosting sites show (README, CHANGELOG, CODEOWNERS). ``LICENSE`` and ``CONTRIBUTING`` are
English words too, so they count only written in capitals, as repositories name them."""
_UPPER_ONLY_FILES = frozenset({"LICENSE", "LICENCE", "CONTRIBUTING"})

_PROJECT_FILE = re.compile(r"(?<![\w.-])(?<!\ba )(?<!\ban )(?P<name>[A-Za-z]+)(?:\.[a-z]+)?(?![\w-])", re.I)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("backticks", re.compile(r"`[^`\s][^`]*`")),
    ("call", re.compile(r"\b[A-Za-z_][\w.]*\((?:[^()\s]|[^()]*[,=][^()]*)?\)")),
    ("file", re.compile(r"(?<![\w.])(?=[\w.]*[A-Za-z]{2})[A-Za-z_][\w-]*(?:\.[A-Za-z_]\w*)+\b(?!\.\w)")),
    ("path", re.compile(r"(?<!\S)(?=\S*[A-Za-z]{2})(?:\.{1,2}/|~/|/)?[\w.-]+/[\w./-]*[\w]")),
    ("snake_case", re.compile(r"\b[A-Za-z0-9]+_[A-Za-z0-9_]+\b")),
    ("camel_case", re.compile(r"\b(?:[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b")),
    ("flag", re.compile(r"(?<!\S)--[a-z][\w-]+")),
    ("project_file", _PROJECT_FILE),
    ("identifier", re.compile(r"\b[A-Z]{2,}(?:[ -]|\s?#)\d+\b|(?<![\w#&])#\d+\b")),
    ("service", re.compile(r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+){1,}\b")),
)


def _is_service(name: str) -> bool:
    parts = name.split("-")
    return len(parts) >= 3 or parts[-1] in SERVICE_ROLES


def code_names(question: str) -> list[str]:
    """The kinds of code names found in ``question`` (module docstring), in a fixed order; ``[]`` when none.

    Raises:
        TypeError: ``question`` is not a string.
    """
    if not isinstance(question, str):
        raise TypeError(f"question must be a string, got {type(question).__name__}: {question!r}")
    found = []
    for kind, pattern in _PATTERNS:
        matches = pattern.findall(question)
        if kind == "file":
            matches = [m for m in matches if not all(len(p) == 1 for p in m.split("."))]
        if kind == "project_file":
            matches = [
                m
                for m in pattern.finditer(question)
                if m["name"].lower() in PROJECT_FILES or m["name"] in _UPPER_ONLY_FILES
            ]
        if kind == "service":
            matches = [m for m in matches if _is_service(m)]
        if kind == "path":
            matches = [m for m in matches if not re.fullmatch(r"\d+/\d+(?:/\d+)?", m) and "//" not in m]
        if matches:
            found.append(kind)
    return found
