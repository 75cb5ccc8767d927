"""The one namespace builder of typed memory: ``(*prefix, scope, kind)`` for reads and writes alike.

LangGraph namespaces are tuples of labels; a label must be a non-empty string without ``"."`` (the separator
LangGraph uses when it stores a namespace as text: ``langgraph.store.base._validate_namespace``), and the first
label may not be ``"langgraph"``. A scope is checked here *before* anything is written, so a bad scope is a clear
``ValueError`` instead of a store error half-way through.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypeVar

from langchain_core.runnables import RunnableConfig

from promptcache._config import UNSET, validate_scope
from promptcache._log import get_logger
from promptcache.memory._kinds import MemoryKind, parse_kind

__all__ = [
    "DEFAULT_PREFIX",
    "MEMORY_CONTEXT_KEY",
    "NAMESPACE_SEPARATOR",
    "UNSCOPED_LABEL",
    "build_namespace",
    "MEMORY_CONTEXT_OPTIONS",
    "UnscopedWarning",
    "check_fixed_scope",
    "memory_call_options",
    "validate_prefix",
    "scope_label",
]

MEMORY_CONTEXT_KEY: Final[str] = "promptcache.memory"
"""``configurable`` key of typed memory's per-call options (``scope``), read by ``TypedMemoryMiddleware``,
``MemoryNode`` and the memory tools alike, so all of them act for the same user."""

NAMESPACE_SEPARATOR: Final[str] = "."
"""The character LangGraph forbids inside namespace labels."""

DEFAULT_PREFIX: Final[tuple[str, ...]] = ("promptcache", "memory")
UNSCOPED_LABEL: Final[str] = "_unscoped"
"""The scope label used when scoping is disabled (``scope=None``); reserved, so no user scope can equal it."""


def validate_prefix(prefix: object) -> tuple[str, ...]:
    """Check a namespace prefix: a tuple/list of non-empty strings without ``"."``, not starting with "langgraph".

    Raises:
        TypeError: not a sequence of strings.  ValueError: an empty label, a label with ``"."`` or NUL, or
        "langgraph" first.
    """
    if isinstance(prefix, str) or not isinstance(prefix, Sequence):
        raise TypeError(f"prefix must be a tuple of strings, got {prefix!r}")
    labels = tuple(prefix)
    for label in labels:
        if not isinstance(label, str):
            raise TypeError(f"prefix labels must be strings, got {label!r} in {prefix!r}")
        if not label.strip() or NAMESPACE_SEPARATOR in label or "\x00" in label:
            raise ValueError(f"prefix label {label!r} must be non-empty and contain no {NAMESPACE_SEPARATOR!r} or NUL")
    if labels and labels[0] == "langgraph":
        raise ValueError(f"prefix {prefix!r} may not start with 'langgraph' (reserved by LangGraph)")
    return labels


_Scope = TypeVar("_Scope")

MEMORY_CONTEXT_OPTIONS: Final[frozenset[str]] = frozenset({"scope"})
"""The per-call options of typed memory (under ``configurable[MEMORY_CONTEXT_KEY]``)."""


def memory_call_options(config: RunnableConfig | None = None) -> dict[str, object]:
    """Typed memory's per-call options from ``config`` (default: the running call's), checked as
    ``TypedMemoryMiddleware.context()`` checks them: only ``scope``, a valid scope label or ``None``.

    Raises:
        TypeError / ValueError: options that are not a dict, an unknown name, or a bad ``scope``.
    """
    from promptcache._config import read_call_options

    options = read_call_options(MEMORY_CONTEXT_KEY, config, MEMORY_CONTEXT_OPTIONS)
    if "scope" in options:
        scope_label(options["scope"], what="per-call scope")
    return options


def scope_label(scope: object, *, what: str = "scope") -> str:
    """The namespace label of a scope: the scope itself, or `UNSCOPED_LABEL` for ``None``.

    Raises:
        TypeError: not a string, int or None.
        ValueError: empty/all-whitespace, contains ``"."`` or NUL, or equals the reserved `UNSCOPED_LABEL`.
    """
    value = validate_scope(scope, what=what)
    if value is None:
        return UNSCOPED_LABEL
    if "\x00" in value:
        raise ValueError(f"scope {value!r} contains a NUL character (PostgreSQL cannot store it)")
    if NAMESPACE_SEPARATOR in value:
        raise ValueError(
            f"scope {value!r} contains the namespace separator {NAMESPACE_SEPARATOR!r}; LangGraph store namespace "
            "labels cannot contain it (map such ids, e.g. e-mail addresses, to a label first)"
        )
    if value == UNSCOPED_LABEL:
        raise ValueError(f"scope {value!r} is reserved for unscoped memories; pass scope=None instead")
    return value


def check_fixed_scope(scope: _Scope) -> _Scope:
    """Check a constructor ``scope`` at construction time: ``UNSET`` (resolve per call) and ``None`` (unscoped)
    pass; anything else must be a valid scope label (`scope_label`). Returns ``scope`` unchanged.

    Raises:
        TypeError / ValueError: from `scope_label` (e.g. ``scope=""``), before anything is read or written.
    """
    if scope is not UNSET:
        scope_label(scope)
    return scope


def build_namespace(prefix: Sequence[str], scope: object, kind: MemoryKind | str) -> tuple[str, ...]:
    """``(*prefix, scope_label(scope), kind.value)`` -- the only place a memory namespace is built.

    Raises:
        ValueError / TypeError: from `scope_label` or `promptcache.memory._kinds.parse_kind`.
    """
    return (*prefix, scope_label(scope), parse_kind(kind).value)


class UnscopedWarning:
    """Logs one warning per owner (a ``MemoryNode`` or ``TypedMemoryMiddleware``) the first time a call finds no
    scope at all -- no per-call scope, no ``scope=`` argument, none of the ``configurable`` fields -- and so reads
    the unscoped memories (usually a missing ``user_id``: the block is empty, silently, otherwise).

    Args:
        owner: the name in the message (``"MemoryNode"``).
    """

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.warned = False

    def check(self, scope: str | None, decided: bool, fields: Sequence[str]) -> None:
        """Warn (once) when ``scope`` is ``None`` and nothing ``decided`` it (a per-call or constructor scope,
        ``None`` included, decides it on purpose)."""
        if scope is not None or decided or self.warned:
            return
        self.warned = True
        get_logger("promptcache.memory").warning(
            "%s found no scope (no %s, no per-call scope, no scope= argument): using the unscoped memories; pass the "
            "user's id as configurable['user_id'], or %s(scope=None) to mean unscoped on purpose",
            self.owner,
            " / ".join(f"configurable[{f!r}]" for f in fields),
            self.owner,
        )
