"""Renamed arguments: the old name keeps working for a while, with a ``DeprecationWarning``.

One spelling for TTLs in seconds across the public API is ``ttl_s`` (or ``<what>_ttl_s``); an argument that
had another name keeps it as a deprecated alias, through `renamed_argument`.
"""

from __future__ import annotations

import warnings
from typing import Any

from promptcache._config import UNSET

__all__ = ["deprecated_attribute", "renamed_argument"]


def renamed_argument(
    owner: str, old: str, old_value: Any, new: str, new_value: Any, new_default: Any
) -> tuple[str, Any]:
    """Which argument the caller meant: ``(name, value)`` of the new one, or of the old one when it was given.

    Args:
        owner: the class or function, for the messages (e.g. ``"ResponseCache"``).
        old: the deprecated name; ``old_value`` its value (``UNSET`` when not given).
        new: the current name; ``new_value`` its value and ``new_default`` its default.

    Returns:
        The name the caller used (so a validation error names the argument as written) and its value.

    Raises:
        TypeError: both names given (``new_value`` other than ``new_default`` and ``old_value`` set).

    Warns:
        DeprecationWarning: the old name was used (stack level: the caller of ``owner``).
    """
    if old_value is UNSET:
        return new, new_value
    if new_value is not new_default and new_value != new_default:
        raise TypeError(f"{owner}: pass {new}= only ({old}= is its deprecated name), got both")
    warnings.warn(f"{owner}({old}=...) is deprecated: use {new}=... (same meaning)", DeprecationWarning, stacklevel=3)
    return old, old_value


def deprecated_attribute(old: str, new: str) -> None:
    """Warn that attribute ``old`` (e.g. ``"ResponseCache.ttl"``) was read; ``new`` is its current name.

    Warns:
        DeprecationWarning: always (stack level: the code that read the attribute).
    """
    warnings.warn(f"{old} is deprecated: use {new} (same value)", DeprecationWarning, stacklevel=3)
