"""Per-call options and scope, read from the current ``RunnableConfig``.

Every processor that takes per-call options keeps them in the call's config under
``configurable[<context key>]`` (a dict). This module is the one place that reads and writes them, and the one
place that resolves the *scope* (tenant) of a call, so every plugin agrees on both.

Scope resolution (docs/architecture.md, "The processor contract"), first match wins:

1. an explicit per-call ``scope`` (``configurable[<context key>]["scope"]``), ``None`` included;
2. the processor's constructor ``scope`` when one was given (``None`` disables scoping);
3. ``configurable["user_id"]``;
4. ``configurable["langgraph_auth_user_id"]`` (set by LangGraph Platform auth);
5. no scope (``None``).

The field names of steps 3 and 4 are configurable (``scope_fields``).

The authenticated user wins. LangGraph Platform sets ``configurable["langgraph_auth_user_id"]`` from the request's
credentials and passes the rest of ``configurable`` (``user_id``, the per-call options) as the client sent it. So
when that field holds a user id, a per-call ``scope`` (step 1) or a ``scope_fields`` value (step 3) that names
another scope is refused with a ``PermissionError`` before anything is read or written, and the authenticated id is
the scope. A constructor ``scope`` (step 2) is the deployer's code, not the caller's, and is kept. A constructor
opting in with ``allow_scope_override=True`` (the same option on every plugin) gets the order above unchanged,
for deployments whose ``configurable`` comes from trusted code only. An empty ``langgraph_auth_user_id`` (what
LangGraph Platform sends without an auth handler) means "no authenticated user"; an empty ``user_id`` is an error.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Final, cast

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config

from promptcache._current_config import CurrentConfigMixin

__all__ = [
    "AUTH_USER_FIELD",
    "CurrentConfigMixin",
    "DEFAULT_SCOPE_FIELDS",
    "UNSET",
    "apply_call_options",
    "check_call_options",
    "existing_call_options",
    "make_call_options",
    "merge_call_options",
    "read_call_options",
    "resolve_scope",
    "scope_from_configurable",
    "check_unicode",
    "is_unicode",
    "validate_key_part",
    "validate_scope",
]


class _Unset:
    """Sentinel type: "not given", as distinct from ``None`` ("given, and empty")."""

    _instance: _Unset | None = None

    def __new__(cls) -> _Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False

    def __copy__(self) -> _Unset:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> _Unset:
        return self


UNSET: Final = _Unset()
"""Marks an argument that was not given (so ``None`` can mean "explicitly none")."""

DEFAULT_SCOPE_FIELDS: Final[tuple[str, ...]] = ("user_id", "langgraph_auth_user_id")
"""``configurable`` fields tried, in order, when neither the call nor the constructor names a scope."""

AUTH_USER_FIELD: Final[str] = "langgraph_auth_user_id"
"""The ``configurable`` field LangGraph Platform fills with the authenticated user's identity (from the request's
credentials, never from the client's ``configurable``); ``""`` when the deployment has no auth handler."""


def _check_options(context_key: str, allowed: Iterable[str], opts: Mapping[str, object]) -> None:
    allowed = frozenset(allowed)
    unknown = sorted(set(opts) - allowed, key=str)  # names written by hand may not all be strings
    if unknown:
        raise ValueError(f"unknown per-call option(s) {unknown!r} for {context_key!r}; allowed: {sorted(allowed)!r}")


def make_call_options(context_key: str, allowed: Iterable[str], **opts: object) -> RunnableConfig:
    """Build a new ``RunnableConfig`` holding ``opts`` under ``configurable[context_key]``.

    Args:
        context_key: the processor's context key (e.g. ``"promptcache.response_cache"``).
        allowed: the option names the processor accepts.
        **opts: the options; values are stored as given (``None`` is a value).

    Returns:
        ``{"configurable": {context_key: {...opts}}}``.

    Raises:
        ValueError: an option name not in ``allowed`` (the message names it).
    """
    _check_options(context_key, allowed, opts)
    return RunnableConfig(configurable={context_key: dict(opts)})


def _configurable(config: object) -> Mapping[str, object]:
    """``config["configurable"]`` (``{}`` when ``config`` is ``None`` or has none), after checking the shapes.

    Raises:
        TypeError: ``config`` is not a mapping, or its ``configurable`` is not a mapping (the message shows it).
    """
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a RunnableConfig dict, got {type(config).__name__}: {config!r:.80}")
    configurable = config.get("configurable")
    if configurable is None:
        return {}
    if not isinstance(configurable, Mapping):
        raise TypeError(
            f"config['configurable'] must be a dict, got {type(configurable).__name__}: {configurable!r:.80}"
        )
    return configurable


def existing_call_options(config: object, context_key: str, allowed: Iterable[str] | None) -> dict[str, object]:
    """The per-call options ``config`` already holds under ``configurable[context_key]`` (a new dict; ``{}`` for
    none), checked as `check_call_options` checks them, so merging into malformed options is an error rather
    than dropping them or keeping a misspelt name.

    Raises:
        TypeError: ``config`` / its ``configurable`` is not a mapping, or the options are not a dict.
        ValueError: an option name not in ``allowed``.
    """
    return check_call_options(context_key, allowed, _configurable(config).get(context_key))


def merge_call_options(
    config: RunnableConfig | Mapping[str, object] | None, context_key: str, allowed: Iterable[str], **opts: object
) -> RunnableConfig:
    """A copy of ``config`` with ``opts`` merged into ``configurable[context_key]``; ``config`` is not modified.

    Everything else is kept: ``configurable``'s other fields (``thread_id``, ``user_id``...), options already set
    for the same key (the new ones win), and the config's other entries (``callbacks``, ``tags``, ``metadata``,
    ``recursion_limit``..., the same objects: a shallow copy). ``None`` gives a new config; a read-only mapping
    (``types.MappingProxyType``) is copied like a dict.

    Raises:
        ValueError: an option name not in ``allowed``, among ``opts`` or the options already in ``config``.
        TypeError: ``config`` is not a mapping, its ``configurable`` is not a mapping, or the options already under
            ``context_key`` are not a dict.
    """
    _check_options(context_key, allowed, opts)
    if config is None:
        return make_call_options(context_key, allowed, **opts)
    merged = existing_call_options(config, context_key, allowed)
    merged.update(opts)
    # A new dict, as ``RunnableConfig(**...)`` makes (a TypedDict call is a plain dict); ``config`` may be any mapping.
    return cast(RunnableConfig, {**config, "configurable": {**_configurable(config), context_key: merged}})


def apply_call_options(
    config: RunnableConfig | None, context_key: str, allowed: Iterable[str], **opts: object
) -> RunnableConfig:
    """Merge ``opts`` into ``config["configurable"][context_key]`` in place and return the same config.

    Options already present for the same key are overwritten by the new ones; other keys are kept.
    ``None`` as ``config`` gives a new config.

    Raises:
        ValueError: an option name not in ``allowed``, among ``opts`` or the options already in ``config``.
        TypeError: ``config`` is not a dict, its ``configurable`` is not a dict (both are modified in place, so a
            read-only mapping is refused), or the options already under ``context_key`` are not a dict. Nothing is
            modified when it raises.
    """
    _check_options(context_key, allowed, opts)
    if config is None:
        config = RunnableConfig()
    if not isinstance(config, dict):
        raise TypeError(f"config must be a RunnableConfig dict, got {type(config).__name__}: {config!r}")
    configurable = config.get("configurable")
    if configurable is not None and not isinstance(configurable, dict):
        raise TypeError(f"config['configurable'] must be a dict, got {configurable!r}")
    merged = existing_call_options(config, context_key, allowed)
    merged.update(opts)
    config.setdefault("configurable", {})[context_key] = merged
    return config


def check_call_options(context_key: str, allowed: Iterable[str] | None, raw: object) -> dict[str, object]:
    """The per-call options found under ``configurable[context_key]`` (``raw``) as a new dict, checked as
    `make_call_options` checks them: options written into a config by hand get the same errors as
    ``context()``'s, instead of being ignored.

    Args:
        context_key: the processor's context key (named in errors).
        allowed: the option names the processor accepts (``None``: any).
        raw: what the config holds there (``None``: no options).

    Raises:
        TypeError: ``raw`` is not a dict (a ``str``, a list...). ValueError: an option name not in ``allowed``.
    """
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise TypeError(
            f"configurable[{context_key!r}] must be a dict of per-call options (as made by context()), got "
            f"{type(raw).__name__}: {raw!r:.80}"
        )
    if allowed is not None:
        _check_options(context_key, allowed, raw)
    return dict(raw)


def read_call_options(
    context_key: str, config: RunnableConfig | None = None, allowed: Iterable[str] | None = None
) -> dict[str, object]:
    """Return a copy of the per-call options under ``configurable[context_key]`` ({} if none).

    ``config`` defaults to the config of the running call (``ensure_config()``: the LangGraph node's or the
    runnable's config, set in a context variable by LangChain).

    Raises:
        TypeError / ValueError: options that are not a dict, or (with ``allowed``) an unknown option name
            (`check_call_options`).
    """
    _configurable(config)  # a bad shape is named here, not an AttributeError inside ensure_config
    cfg = ensure_config(config)
    opts = check_call_options(context_key, allowed, (cfg.get("configurable") or {}).get(context_key))
    return copy.copy(opts)


def validate_scope(scope: object, *, what: str = "scope") -> str | None:
    """Check a scope value: ``None`` or a non-empty string.

    An ``int`` is refused, not turned into a string: ``1`` and ``"1"`` would otherwise name the same scope, so a
    caller whose tenants are told apart by the id's type would share entries. Pass ``str(user_id)``.

    Raises:
        TypeError: ``scope`` is neither ``None`` nor ``str`` (an ``int`` included).
        ValueError: ``scope`` is an empty or all-whitespace string, or not valid Unicode text (a lone surrogate
            such as ``"\ud800"``: no UTF-8 store or key can hold it).
    """
    if scope is None or scope is UNSET:
        return None
    if not isinstance(scope, str):
        hint = (
            f" (pass str({scope!r}) if that is the id)"
            if isinstance(scope, int) and not isinstance(scope, bool)
            else ""
        )
        raise TypeError(f"{what} must be a string or None, got {type(scope).__name__}: {scope!r}{hint}")
    if not scope.strip():
        raise ValueError(f"{what} must be a non-empty string, got {scope!r}")
    return check_unicode(scope, what)


KEY_SEPARATOR: Final[str] = ":"
"""The separator of the parts of a cache key (``response:{agent_id}:{scope hash}:...``)."""


def validate_key_part(value: object, what: str) -> str:
    """Check a value that becomes a part of a key namespace (``ResponseCache(agent_id=...)``): the rules of
    `validate_scope` (a non-empty, non-blank string of valid Unicode), a ``str`` only, and no
    `KEY_SEPARATOR` ``":"`` (with it, one namespace could spell another's: ``agent_id="shop:1a2b3c4d"``
    unscoped is agent ``"shop"`` scoped to a user whose scope hash is ``1a2b3c4d``) nor NUL.

    Returns:
        ``value`` unchanged.

    Raises:
        TypeError: not a ``str``. ValueError: empty/blank, a lone surrogate, a ``":"`` or a NUL; the message names
            ``what`` and the value.
    """
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}: {value!r}")
    validate_scope(value, what=what)
    if KEY_SEPARATOR in value:
        raise ValueError(f"{what} must not contain {KEY_SEPARATOR!r} (the key separator), got {value!r}")
    if "\x00" in value:
        raise ValueError(f"{what} must not contain a NUL character, got {value!r}")
    return value


def is_unicode(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8: no lone surrogate (``"\ud800"``, from a bad decode), which no
    Redis key, JSON record or PostgreSQL text can hold. ASCII text is answered without encoding."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_unicode(text: str, what: str) -> str:
    """``text`` unchanged when `is_unicode`.

    Raises:
        ValueError: it holds a lone surrogate; the message names ``what`` and shows the value.
    """
    if not is_unicode(text):
        raise ValueError(f"{what} must be valid Unicode text (it holds a lone surrogate), got {text!r}")
    return text


def resolve_scope(
    call_options: Mapping[str, object] | None = None,
    constructor_scope: object = UNSET,
    config: RunnableConfig | None = None,
    scope_fields: Iterable[str] = DEFAULT_SCOPE_FIELDS,
    allow_scope_override: bool = False,
) -> str | None:
    """Resolve the scope (tenant) of the current call; see the module docstring for the order and for the
    authenticated user.

    Args:
        call_options: the processor's per-call options (``read_call_options(...)``); a ``"scope"`` entry wins,
            even when it is ``None``.
        constructor_scope: the processor's constructor ``scope``; ``UNSET`` when none was given.
        config: the call's config; defaults to the running call's (``ensure_config()``).
        scope_fields: ``configurable`` fields tried in order when nothing above decides.
        allow_scope_override: let a per-call ``scope`` or a ``scope_fields`` value differ from the authenticated
            ``configurable["langgraph_auth_user_id"]`` (default False: refused).

    Returns:
        The scope as a string, or ``None`` for "not scoped".

    Raises:
        PermissionError: an authenticated user id is present and a per-call scope or a ``scope_fields`` value
            names another scope (without ``allow_scope_override``); the message names both.
        TypeError / ValueError: a scope value that is not a non-empty string or int (``user_id=""``), or a config
            of the wrong shape.
    """
    _configurable(config)  # a bad shape is named here, not an AttributeError inside ensure_config
    configurable = ensure_config(config).get("configurable") or {}
    return scope_from_configurable(configurable, call_options, constructor_scope, scope_fields, allow_scope_override)


def _refuse(what: str, value: str | None, auth: str) -> PermissionError:
    return PermissionError(
        f"{what} {value!r} differs from the authenticated user configurable[{AUTH_USER_FIELD!r}]={auth!r}: "
        "refused (a caller may not name another user's scope); pass allow_scope_override=True to the "
        "constructor only when every config comes from trusted code"
    )


def scope_from_configurable(
    configurable: Mapping[str, object],
    call_options: Mapping[str, object] | None = None,
    constructor_scope: object = UNSET,
    scope_fields: Iterable[str] = DEFAULT_SCOPE_FIELDS,
    allow_scope_override: bool = False,
) -> str | None:
    """`resolve_scope` on an already-read ``configurable`` mapping (for hot paths that read the config once).

    Raises:
        PermissionError / TypeError / ValueError: as `resolve_scope`.
    """
    raw_auth = configurable.get(AUTH_USER_FIELD)
    auth = (
        None
        if raw_auth is None or raw_auth == ""
        else validate_scope(raw_auth, what=f"configurable[{AUTH_USER_FIELD!r}]")
    )
    if call_options and "scope" in call_options:
        scope = validate_scope(call_options["scope"], what="per-call scope")
        if auth is not None and scope != auth and not allow_scope_override:
            raise _refuse("per-call scope", scope, auth)
        return scope
    if constructor_scope is not UNSET:
        return validate_scope(constructor_scope)
    for field in scope_fields:
        value = configurable.get(field)
        if value is None or (field == AUTH_USER_FIELD and value == ""):
            continue
        scope = validate_scope(value, what=f"configurable[{field!r}]")
        if auth is None or allow_scope_override:
            return scope
        if scope != auth:
            raise _refuse(f"configurable[{field!r}]", scope, auth)
    return auth
