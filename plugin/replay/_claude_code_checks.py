"""Two damages of a Claude Code session log that would otherwise be read silently: a ``usage`` field that is not a
token count, and a ``parentUuid`` cycle.

- **usage**: Claude Code writes the Messages API ``usage`` object as it came (non-negative integer counts). A count
  that is a string, a bool, negative, not below 2**32 (``MOST_TOKENS``, no call's count) or a non-integral number (``4.5``) would read as 0 and bend the as-logged
  cost. Such a line's usage is not read: the line is counted as skipped with its reason, in the same tally and
  warning as broken JSON lines (`promptcache.replay._skipped`), or, outside a skipping block (``--strict``), it
  is a ``TranscriptError`` naming the file, line and field. An integral float (``5.0``) is the integer, as for
  every log (`promptcache.replay._logged_usage`).
- **cycles**: every record names one parent, so following ``parentUuid`` must end at a root. A cycle (``a`` names
  ``b``, ``b`` names ``a``; or a record names itself) is cut at the record whose parent was logged after it
  (a parent is normally logged first): that record becomes a root, and one warning per cut names its file, line
  and ``parentUuid``.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from ._messages import _short
from ._transcript import TranscriptWarning
from ._usage_checks import bad_count, count_problem, report_usage

if TYPE_CHECKING:
    from ._claude_code_tree import Line, Session

__all__ = ["USAGE_COUNT_FIELDS", "check_usage", "cut_cycles"]

USAGE_COUNT_FIELDS = (
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "output_tokens",
)
"""The counts of an Anthropic Messages API ``usage`` object the replay reads (Anthropic API reference, "Messages",
``usage``); ``cache_creation.ephemeral_5m_input_tokens`` / ``ephemeral_1h_input_tokens`` are checked too."""

_TTL_FIELDS = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")


def _usage_problem(usage: object) -> str | None:
    """Why ``usage`` is not a usage object of token counts (``None``: it is one, or absent)."""
    if usage is None:
        return None
    if not isinstance(usage, dict):
        return f"message.usage must be an object of token counts, got {_short(usage)}"
    for key in USAGE_COUNT_FIELDS:
        if count_problem(usage.get(key)):
            return bad_count(f"message.usage.{key}", usage.get(key))
    detail = usage.get("cache_creation")
    if detail is not None and not isinstance(detail, dict):
        return f"message.usage.cache_creation must be an object, got {_short(detail)}"
    for key in _TTL_FIELDS:
        value = detail.get(key) if isinstance(detail, dict) else None
        if count_problem(value):
            return bad_count(f"message.usage.cache_creation.{key}", value)
    return None


def check_usage(usage: object, name: str, lineno: int) -> bool:
    """Whether the ``usage`` of line ``lineno`` of ``name`` can be read (module docstring).

    Returns:
        ``True``: absent or every count valid. ``False``: a bad count, recorded in the enclosing skipping tally
        (the caller then ignores the line's usage).

    Raises:
        TranscriptError: a bad count outside a skipping block (``--strict``): names the file, line and field.
    """
    problem = _usage_problem(usage)
    if problem is None:
        return True
    report_usage(name, lineno, problem)
    return False


def _position(line: Line) -> tuple[int, int]:
    return line.file, line.line


def cut_cycles(session: Session) -> None:
    """Make every ``parentUuid`` chain of ``session`` end at a root (module docstring); one ``TranscriptWarning``
    per cut. Linear in the records: each is walked once."""
    done: set[str] = set()
    by_uuid = session.by_uuid
    for start in list(by_uuid.values()):
        path: list[Line] = []
        on_path: dict[str, int] = {}
        node: Line | None = start
        while node is not None and node.uuid not in done:
            if node.uuid in on_path:
                _cut(session, path[on_path[node.uuid] :])
                break
            on_path[node.uuid] = len(path)
            path.append(node)
            node = by_uuid.get(node.parent) if node.parent else None
        done.update(on_path)


def _cut(session: Session, cycle: list[Line]) -> None:
    """Cut ``cycle`` (each line's parent is the next one, the last's is the first) at the line whose parent was
    logged latest at or after it."""
    parents = [*cycle[1:], cycle[0]]
    late = [(p, line) for line, p in zip(cycle, parents) if _position(p) >= _position(line)]
    _, line = max(late, key=lambda pair: _position(pair[0]))
    warnings.warn(
        f"{session.names[line.file]}:{line.line}: parentUuid {line.parent!r} closes a cycle (that record descends "
        "from this one); the chain is cut here, this record starts it",
        TranscriptWarning,
        stacklevel=2,
    )
    line.parent = None
