"""Argument checks shared by `IntentionMemory` and
`IntentionCache`: bad input raises a ``TypeError``/``ValueError`` naming the
bad value, before anything is read or written, whatever the backend."""

from __future__ import annotations

import math

from promptcache._config import check_unicode, validate_scope
from promptcache.intention._results import serialise_json

__all__ = ["check_call", "check_text", "check_unit", "check_user"]


def check_text(value: str, what: str) -> str:
    """``value`` unchanged when it can be encoded as UTF-8 (`promptcache._config.check_unicode`).

    Raises:
        ValueError: ``value`` holds a lone surrogate (e.g. ``"\ud800"``, from a bad decode): no backend can store
            it (Redis keys and JSON records are UTF-8), so it is refused up front, named by ``what``.
    """
    return check_unicode(value, what)


def check_user(user_id: object) -> str:
    """The user id as a string: a non-empty, non-blank ``str`` (or an ``int``, turned into one) without lone
    surrogates.

    Raises:
        TypeError: not a ``str``/``int`` (``bool`` included). ValueError: ``None``, empty, blank, or a lone
            surrogate. The message names ``user_id``.
    """
    user = validate_scope(user_id, what="user_id")
    if user is None:
        raise ValueError("user_id must be a non-empty string, got None")
    return check_text(user, "user_id")


def check_call(tool: object, args: object) -> None:
    """Check a tool call's ``tool`` (``None`` or a non-empty ``str`` without lone surrogates) and ``args`` (``None``
    or a JSON value, see `serialise_json`); the same rule for ``store`` and
    ``retrieve``.

    Raises:
        TypeError: ``tool`` not a ``str``/``None``; ``args`` not a JSON value.
        ValueError: ``tool`` empty, blank or holding a lone surrogate; ``args`` holds NaN/infinity.
    """
    if tool is not None:
        if not isinstance(tool, str):
            raise TypeError(f"tool must be a non-empty str or None, got {tool!r}")
        if not tool.strip():
            raise ValueError(f"tool must be a non-empty str or None, got {tool!r}")
        check_text(tool, "tool")
    if args is not None:
        serialise_json(args, "args")


def check_unit(value: object, what: str) -> float:
    """``value`` as a float in ``[0, 1]``.

    Raises:
        ValueError: not an ``int``/``float`` (``bool`` included), NaN, or outside ``[0, 1]`` (named by ``what``).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or not 0 <= value <= 1:
        raise ValueError(f"{what} must be a number in [0, 1], got {value!r}")
    return float(value)
