"""The model part of a response-cache key: provider, model id and LangChain's ``_get_llm_string()``, fresh and cheap.

``BaseChatModel._get_llm_string()`` is the string LangChain's own ``BaseCache`` keys on (our key keeps it:
docs/architecture.md, "ResponseCache"). Calling it on every model call costs more than it should, and for serialisable models it can go stale:

- Non-serialisable models whose class keeps LangChain's implementation: the string is
  ``str(sorted({**_identifying_params, "_type": _llm_type, "stop": None}.items()))``. We build exactly that
  string from the two properties, skipping the deprecation-warning guard (``warnings.catch_warnings``) LangChain
  wraps around ``dict()``, which is most of its cost. Recomputed on every call: nothing to go stale.
- Serialisable models (``is_lc_serializable()``, e.g. ``ChatBedrockConverse``, ``ChatOpenAI``): LangChain's string
  is ``json.dumps`` of ``dumpd(model)``, and ``dumpd(model)`` is kept in the ``functools.cached_property``
  ``_serialized``, computed once per object. Setting ``model.temperature = 0.9`` after a first call does not
  change LangChain's string (a stale key: a hit for a different temperature). We remember the string per model
  object together with a snapshot of the model's state: every field value by identity, and the canonical JSON
  (`promptcache._keys`) of the values that can change in place (containers, objects; not ``str``/``int``/
  ``float``/``bool``/``None``/``bytes``), of private attributes and extras; ``exclude=True`` fields such as API
  clients by identity only. When anything differs, or on first sight, the stale ``_serialized`` is dropped so
  LangChain recomputes it, and the string is computed again. The check catches a field reassigned or edited in
  place, and costs less than LangChain's own ``json.dumps`` of the cached dict.
- Anything else (a class overriding ``_get_llm_string`` / ``_get_invocation_params`` / ``dict`` / ``asdict``,
  or an object that is not a ``BaseChatModel``): ``model._get_llm_string()`` on every call, as LangChain does.
"""

from __future__ import annotations

import operator
import threading
from typing import Final, cast

from cachetools import LRUCache
from langchain_core.language_models import BaseChatModel

from promptcache._compat import LLM_STRING_METHODS, SERIALIZED_ATTR, langchain_llm_string
from promptcache._keys import canonical_json
from promptcache._model_attrs import first_str_attr, lookup_plan

__all__ = ["identity_parts", "llm_string", "model_identity"]

_MODEL_ID_ATTRS: Final = ("model_name", "model_id", "model")
# Overriding any of LangChain's LLM_STRING_METHODS makes a class take the plain ``_get_llm_string()`` path.
_INVOCATION_METHODS: Final = LLM_STRING_METHODS
_FAST, _SERIALIZABLE, _CALL = "fast", "serializable", "call"
_CLASS_PATH: dict[type, str] = {}
_EXCLUDED: dict[type, tuple[str, ...]] = {}

_MEMO: LRUCache[int, tuple[object, _Snapshot, str]] = LRUCache(
    maxsize=256
)  # id(model) -> (model, _Snapshot, llm_string)
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


# Value types that cannot change in place: such a field is unchanged when it holds the very same object.
_IMMUTABLE: Final = frozenset({str, int, float, bool, type(None), bytes})


class _Snapshot:
    """What a model's state was when its string was computed: ``__dict__`` keys and values (by identity), and the
    canonical JSON of the values that can change in place (containers, objects), of private attributes and extras.

    Fields declared ``exclude=True`` (API clients, e.g. boto3's) never reach ``dumpd``; they are compared by
    identity only (a botocore client's ``repr`` alone costs ~10 us). LangChain's cached ``_serialized`` is ignored.
    """

    __slots__ = ("keys", "values", "mutable", "data")

    def __init__(self, keys: tuple[str, ...], values: list[object], mutable: tuple[int, ...], data: bytes) -> None:
        self.keys, self.values, self.mutable, self.data = keys, values, mutable, data


def _state(state: dict[str, object]) -> tuple[tuple[str, ...], list[object]]:
    """``__dict__`` keys and values without LangChain's cached ``_serialized`` (set and dropped around us)."""
    keys, values = tuple(state), list(state.values())
    if SERIALIZED_ATTR in state:
        i = keys.index(SERIALIZED_ATTR)
        keys = keys[:i] + keys[i + 1 :]
        del values[i]
    return keys, values


def _mutable_data(model: object, values: list[object], mutable: tuple[int, ...]) -> bytes:
    parts = [values[i] for i in mutable]
    # private attributes and extras, when there are any (a literal None would make canonical_json re-walk for NaN)
    parts.append(getattr(model, "__pydantic_private__", None) or {})
    parts.append(getattr(model, "__pydantic_extra__", None) or {})
    return canonical_json(parts)


def _snapshot(model: object) -> _Snapshot | None:
    """The model's current state; ``None`` when its JSON cannot be taken (no memo: computed every call)."""
    keys, values = _state(model.__dict__)
    excluded = _excluded_fields(type(model))
    mutable = tuple(
        i for i, (k, v) in enumerate(zip(keys, values, strict=True)) if type(v) not in _IMMUTABLE and k not in excluded
    )
    try:
        return _Snapshot(keys, values, mutable, _mutable_data(model, values, mutable))
    except Exception:  # noqa: BLE001 - e.g. a field pydantic cannot dump: no memo, compute every time
        return None


def _unchanged(model: object, snap: _Snapshot) -> bool:
    """Whether ``model`` still has the state ``snap`` recorded: same keys, the same object in every field, and
    the same JSON for the fields that can change in place. C-level passes, then JSON of the mutable values only."""
    keys, values = _state(model.__dict__)
    if keys != snap.keys or not all(map(operator.is_, values, snap.values)):
        return False
    try:
        return _mutable_data(model, values, snap.mutable) == snap.data
    except Exception:  # noqa: BLE001 - became unserialisable: recompute
        return False


def _serializable_llm_string(model: object) -> str:
    key = id(model)
    with _MEMO_LOCK:
        hit = _MEMO.get(key)
    if hit is not None and hit[0] is model and _unchanged(model, hit[1]):
        return hit[2]
    model.__dict__.pop(SERIALIZED_ATTR, None)  # LangChain's cached dumpd(model), stale once a field changed
    snap = _snapshot(model)  # taken before computing: a change racing the computation makes the next call miss
    value = langchain_llm_string(model)
    if snap is not None:
        with _MEMO_LOCK:
            _MEMO[key] = (model, snap, value)  # the references keep ids from being reused while memoised
    return value


def llm_string(model: object) -> str:
    """``model._get_llm_string()`` (no stop words, no extra kwargs), computed as cheaply as it can be kept exact.

    Equal to LangChain's string for every model, except that a serialisable model changed after its first call
    gets its current string where LangChain would return the one of its first call (see the module docstring).

    Raises:
        whatever the model's own ``_get_llm_string``/``_identifying_params`` raises.
    """
    path = _path(type(model))
    if path == _FAST:
        chat = cast("BaseChatModel", model)  # _path checked the class
        return fast_llm_string(chat._identifying_params, chat._llm_type)
    if path == _SERIALIZABLE:
        return _serializable_llm_string(model)
    value = langchain_llm_string(model)
    return value


def _lookups(cls: type) -> tuple[bool, ...]:
    """Per ``_MODEL_ID_ATTRS`` name: whether ``getattr`` is needed to read it from a ``cls`` instance
    (`promptcache._model_attrs.lookup_plan`)."""
    return lookup_plan(cls, _MODEL_ID_ATTRS)


def _model_id(model: object) -> str | None:
    """The first string among ``model.model_name``, ``model.model_id``, ``model.model``, else ``None``: as
    ``getattr(model, name, None)`` in that order, read without pydantic's raising ``__getattr__``
    (`promptcache._model_attrs.first_str_attr`)."""
    return first_str_attr(model, _MODEL_ID_ATTRS)


def fast_llm_string(params: object, llm_type: object) -> str:
    """LangChain's ``_get_llm_string()`` of a non-serialisable model from its ``_identifying_params`` and
    ``_llm_type``: ``str(sorted({**params, "_type": llm_type, "stop": None}.items()))`` (module docstring)."""
    merged = dict(params)  # type: ignore[call-overload]  # a mapping: the model's _identifying_params
    merged["_type"] = llm_type
    merged["stop"] = None
    return str(sorted(merged.items()))


def identity_parts(model: object) -> tuple[object, str | None, str, dict[str, object]]:
    """`model_identity`'s values without the dict: ``(provider, model_id, llm_string, bound kwargs)`` (bound
    kwargs ``{}`` when ``model`` is no ``RunnableBinding``). Read on every model call by the default key."""
    bound_kwargs: dict[str, object] = {}
    while not hasattr(model, "_get_llm_string") and hasattr(model, "bound"):
        bound_kwargs = {**getattr(model, "kwargs", {}), **bound_kwargs}
        model = getattr(model, "bound")  # noqa: B009 - a RunnableBinding's model (any object here)
    try:
        if _path(type(model)) == _FAST:  # llm_string's first case, inline: this runs on every model call
            chat = cast("BaseChatModel", model)  # _path checked the class
            identity = fast_llm_string(chat._identifying_params, chat._llm_type)
        else:
            identity = llm_string(model)
    except Exception:  # noqa: BLE001 - an odd model still gets a stable identity
        identity = f"{type(model).__module__}.{type(model).__qualname__}"
    return getattr(model, "_llm_type", type(model).__name__), _model_id(model), identity, bound_kwargs


def model_identity(model: object) -> dict[str, object]:
    """``{"provider", "model_id", "llm_string"}`` for a chat model (plus ``"bound"``: ``RunnableBinding`` kwargs).

    Args:
        model: a ``BaseChatModel``, or a ``RunnableBinding`` around one (its kwargs, e.g. tools or temperature bound
            with ``bind``, go under ``"bound"``, inner bindings first).

    Returns:
        ``provider``: the model's ``_llm_type``; ``model_id``: the first string among ``model_name``, ``model_id``,
        ``model`` (else ``None``); ``llm_string``: `llm_string` (LangChain's ``_get_llm_string()``), or the
        class path when that raises.
    """
    provider, model_id, identity, bound_kwargs = identity_parts(model)
    out = {"provider": provider, "model_id": model_id, "llm_string": identity}
    if bound_kwargs:
        out["bound"] = bound_kwargs
    return out
