"""The model part of a response-cache key: provider, model id and LangChain's ``_get_llm_string()``, fresh and cheap.

``BaseChatModel._get_llm_string()`` is the string LangChain's own ``BaseCache`` keys on (DESIGN.md keeps it in
our key). Calling it on every model call costs more than it should, and for serialisable models it can go stale:

- Non-serialisable models whose class keeps LangChain's implementation: the string is
  ``str(sorted({**_identifying_params, "_type": _llm_type, "stop": None}.items()))``. We build exactly that
  string from the two properties, skipping the deprecation-warning guard (``warnings.catch_warnings``) LangChain
  wraps around ``dict()``, which is most of its cost. Recomputed on every call: nothing to go stale.
- Serialisable models (``is_lc_serializable()``, e.g. ``ChatBedrockConverse``, ``ChatOpenAI``): LangChain's string
  is ``json.dumps`` of ``dumpd(model)``, and ``dumpd(model)`` is kept in the ``functools.cached_property``
  ``_serialized``, computed once per object. Setting ``model.temperature = 0.9`` after a first call does not
  change LangChain's string (a stale key: a hit for a different temperature). We remember the string per model
  object together with a fingerprint of the model's state (canonical JSON of its fields, private attributes and
  extras, :mod:`promptcache.keys`; ``exclude=True`` fields such as API clients by identity). When the
  fingerprint differs, or on first sight, the stale ``_serialized`` is dropped so LangChain recomputes it, and
  the string is computed again. The fingerprint changes whenever a field does, in place or not, and reading it
  costs less than LangChain's ``json.dumps`` (about 0.8x for ``ChatBedrockConverse``, bench/README.md).
- Anything else (a class overriding ``_get_llm_string`` / ``_get_invocation_params`` / ``dict`` / ``asdict``,
  or an object that is not a ``BaseChatModel``): ``model._get_llm_string()`` on every call, as LangChain does.
"""

from __future__ import annotations

import threading
from typing import Any, Final

from cachetools import LRUCache
from langchain_core.language_models import BaseChatModel

from promptcache.keys import canonical_json

__all__ = ["llm_string", "model_identity"]

_MODEL_ID_ATTRS: Final = ("model_name", "model_id", "model")
# BaseChatModel methods ``_get_llm_string`` relies on for a non-serialisable model; overriding any of them makes a
# class take the plain ``_get_llm_string()`` path.
_INVOCATION_METHODS: Final = ("_get_llm_string", "_get_invocation_params", "_dict_for_compat", "dict", "asdict")
_FAST, _SERIALIZABLE, _CALL = "fast", "serializable", "call"
_CLASS_PATH: dict[type, str] = {}
_EXCLUDED: dict[type, tuple[str, ...]] = {}

_MEMO: LRUCache = LRUCache(maxsize=256)  # id(model) -> (model, fingerprint, llm_string)
_MEMO_LOCK = threading.Lock()


def _path(cls: type) -> str:
    path = _CLASS_PATH.get(cls)
    if path is None:
        if not issubclass(cls, BaseChatModel) or cls._get_llm_string is not BaseChatModel._get_llm_string:
            path = _CALL
        elif cls.is_lc_serializable():
            path = _SERIALIZABLE
        elif all(getattr(cls, name) is getattr(BaseChatModel, name) for name in _INVOCATION_METHODS):
            path = _FAST
        else:
            path = _CALL
        _CLASS_PATH[cls] = path
    return path


def _excluded_fields(cls: type) -> tuple[str, ...]:
    names = _EXCLUDED.get(cls)
    if names is None:
        fields = getattr(cls, "model_fields", {})
        names = _EXCLUDED[cls] = tuple(sorted(k for k, f in fields.items() if getattr(f, "exclude", False)))
    return names


def _fingerprint(model: Any) -> tuple[bytes, tuple[Any, ...]] | None:
    """The model's state as ``(canonical JSON, excluded field values)``; ``None`` when it cannot be taken.

    The JSON covers the fields, private attributes and extras (LangChain's cached ``_serialized`` left out).
    Fields declared ``exclude=True`` (API clients, e.g. boto3's) never reach ``dumpd``; they are compared by
    identity instead of by ``repr`` (a botocore client's ``repr`` alone costs ~10 us).
    """
    excluded = _excluded_fields(type(model))
    state = model.__dict__
    fields = dict(state)
    fields.pop("_serialized", None)
    for name in excluded:
        fields.pop(name, None)
    try:
        data = canonical_json([fields, getattr(model, "__pydantic_private__", None),
                               getattr(model, "__pydantic_extra__", None)])
    except Exception:  # noqa: BLE001 - e.g. a field pydantic cannot dump: no memo, compute every time
        return None
    return data, tuple(map(state.get, excluded))


def _same_state(a: tuple[bytes, tuple[Any, ...]], b: tuple[bytes, tuple[Any, ...]]) -> bool:
    return a[0] == b[0] and len(a[1]) == len(b[1]) and all(x is y for x, y in zip(a[1], b[1], strict=True))


def _serializable_llm_string(model: Any) -> str:
    state = _fingerprint(model)
    key = id(model)
    if state is not None:
        with _MEMO_LOCK:
            hit = _MEMO.get(key)
        if hit is not None and hit[0] is model and _same_state(hit[1], state):
            return hit[2]
    model.__dict__.pop("_serialized", None)  # LangChain's cached dumpd(model), stale once a field changed
    value = model._get_llm_string()
    if state is not None:
        with _MEMO_LOCK:
            _MEMO[key] = (model, state, value)  # the references keep ids from being reused while memoised
    return value


def llm_string(model: Any) -> str:
    """``model._get_llm_string()`` (no stop words, no extra kwargs), computed as cheaply as it can be kept exact.

    Equal to LangChain's string for every model, except that a serialisable model changed after its first call
    gets its current string where LangChain would return the one of its first call (see the module docstring).

    Raises:
        whatever the model's own ``_get_llm_string``/``_identifying_params`` raises.
    """
    path = _path(type(model))
    if path == _FAST:
        params = dict(model._identifying_params)
        params["_type"] = model._llm_type
        params["stop"] = None
        return str(sorted(params.items()))
    if path == _SERIALIZABLE:
        return _serializable_llm_string(model)
    return model._get_llm_string()


def model_identity(model: Any) -> dict[str, Any]:
    """``{"provider", "model_id", "llm_string"}`` for a chat model (plus ``"bound"``: ``RunnableBinding`` kwargs).

    Args:
        model: a ``BaseChatModel``, or a ``RunnableBinding`` around one (its kwargs, e.g. tools or temperature bound
            with ``bind``, go under ``"bound"``, inner bindings first).

    Returns:
        ``provider``: the model's ``_llm_type``; ``model_id``: the first string among ``model_name``, ``model_id``,
        ``model`` (else ``None``); ``llm_string``: :func:`llm_string` (LangChain's ``_get_llm_string()``), or the
        class path when that raises.
    """
    bound_kwargs: dict[str, Any] = {}
    while not hasattr(model, "_get_llm_string") and hasattr(model, "bound"):
        bound_kwargs = {**getattr(model, "kwargs", {}), **bound_kwargs}
        model = model.bound
    try:
        if _path(type(model)) == _FAST:  # llm_string's first case, inline: this runs on every model call
            params = dict(model._identifying_params)
            params["_type"] = model._llm_type
            params["stop"] = None
            identity = str(sorted(params.items()))
        else:
            identity = llm_string(model)
    except Exception:  # noqa: BLE001 - an odd model still gets a stable identity
        identity = f"{type(model).__module__}.{type(model).__qualname__}"
    fields = getattr(model, "__dict__", {})
    model_id = None
    for attr in _MODEL_ID_ATTRS:
        # pydantic fields live in __dict__; reading it avoids pydantic's slow __getattr__ for absent names
        value = fields[attr] if attr in fields else getattr(model, attr, None)
        if isinstance(value, str):
            model_id = value
            break
    out = {"provider": getattr(model, "_llm_type", type(model).__name__), "model_id": model_id,
           "llm_string": identity}
    if bound_kwargs:
        out["bound"] = bound_kwargs
    return out
