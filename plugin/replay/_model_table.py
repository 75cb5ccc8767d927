"""The replay's model table: cache rules and prices per model id, with user overrides (no release needed).

``ModelTable()`` answers from the project's tables (``promptcache.cache_points.get_model_info`` for the cache rules,
``promptcache._pricing.KNOWN_PRICES`` for prices). ``ModelTable(overrides, min_tokens=N)`` replaces entries:

- ``min_tokens``: the minimum tokens per cache point for every model of the replay (``--min-tokens N``);
- ``overrides``: ``{model_id: {field: value}}``, read from a JSON or TOML file by ``load_overrides`` (``--models
  FILE``). Fields (all optional; a model that is not in the tables needs the four prices): ``min_tokens``
  (tokens), ``max_points`` (cache points per request, at least 1), ``ttls`` (list of ``"5m"``/``"1h"``), ``family``
  (``"claude"``/``"nova"``/``"openai"``), ``cachable`` (list of ``"system"``/``"messages"``/``"tools"``), and USD per 1M tokens
  ``input``, ``output``, ``cache_write_5m``, ``cache_write_1h``, ``cache_read``. A model that is not in the tables
  but has an entry is the user's own: no unknown-model warning, and its rules are the entry's, with defaults for
  what it leaves out (1,024-token minimum, 4 points, ``["5m"]``, the family's fields: Claude system, messages and
  tools; Nova system and messages; family Nova when the id names ``nova``, else Claude).
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from pathlib import Path
from typing import Any

import orjson

from promptcache.cache_points._model_info import BEDROCK_MAX_CACHE_POINTS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10: TOML files need the tomli backport
    tomllib = None

from promptcache._pricing import ModelPrice, base_model_id, price_for, price_key

from ._input_guard import read_input
from ._models import TTL_SECONDS, CacheRules, cache_rules, in_model_table, provider_rules
from ._openai_cache import openai_rules
from ._transcript import TranscriptError, TranscriptWarning

__all__ = ["ModelTable", "load_overrides", "OVERRIDE_FIELDS"]

_PRICE_FIELDS = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")
#: The prices a model outside the shipped tables needs (``cache_write_1h`` is optional: no 1-hour TTL without it).
_NEEDED_PRICES = ("input", "output", "cache_write_5m", "cache_read")
#: Fields an override entry may set.
OVERRIDE_FIELDS = frozenset({"min_tokens", "max_points", "ttls", "family", "cachable", *_PRICE_FIELDS})
_CACHABLE = ("system", "messages", "tools")
#: Rules of a model the user defined with an override entry that leaves them out: the smallest minimum and the
#: usual 4 points of the Bedrock prompt-caching table (Bedrock user guide, "Supported models, regions, and limits").
_USER_MIN_TOKENS, _USER_MAX_POINTS = 1_024, 4
MAX_MIN_TOKENS = 10_000_000
"""Largest ``min_tokens`` accepted: ten times the largest context window of the shipped tables (1M tokens); a
cache point cannot have more tokens before it than a request holds."""
_FAMILY_CACHABLE = {
    "claude": frozenset(_CACHABLE),
    "nova": frozenset({"system", "messages"}),
    "openai": frozenset(_CACHABLE),
}


def load_overrides(path: str | Path) -> dict[str, dict[str, Any]]:
    """Read a model-override file: JSON (``.json``) or TOML (any other suffix), ``{model_id: {field: value}}``.

    Raises:
        ValueError: unreadable file, bad syntax, or an entry that is not a table / names an unknown field / has a
            bad value (the message names the file, the model and the field).
    """
    name = str(path)
    try:
        data = read_input(path)[0]
    except TranscriptError as exc:
        raise ValueError(f"{name}: cannot read the model file: {exc.reason}") from None
    except OSError as exc:
        raise ValueError(f"{name}: cannot read the model file: {exc.strerror or exc}") from None
    is_json = name.lower().endswith(".json")
    if not is_json and tomllib is None:  # pragma: no cover
        raise ValueError(f"{name}: TOML model files need Python 3.11+; give a .json file")
    try:
        doc = orjson.loads(data) if is_json else tomllib.loads(data.decode("utf-8"))
    except (orjson.JSONDecodeError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{name}: not a valid model file: {exc}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{name}: expected a table of model ids, got {type(doc).__name__}")
    for model_id, entry in doc.items():
        _check_entry(f"{name}: {model_id}", entry, model_id)
    return doc


def _check_entry(where: str, entry: object, model_id: str | None = None) -> None:
    """Raise ``ValueError`` naming ``where`` for a bad entry; with ``model_id`` (a ``--models`` file's entry), also
    an empty id and missing prices, and warn of a cache read dearer than input (`_check_prices`)."""
    if model_id is not None and not model_id.strip():
        raise ValueError(f"{where.rsplit(': ', 1)[0]}: a model id must not be empty, got {model_id!r}")
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a table of fields, got {entry!r}")
    unknown = sorted(set(entry) - OVERRIDE_FIELDS)
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}; allowed: {sorted(OVERRIDE_FIELDS)}")
    for key, most in (("min_tokens", MAX_MIN_TOKENS), ("max_points", BEDROCK_MAX_CACHE_POINTS)):
        value = entry.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most):
            raise ValueError(f"{where}: {key} must be an integer from 0 to {most:,}, got {value!r}")
    if entry.get("max_points") == 0:  # every request with a cache point would be refused later
        raise ValueError(f"{where}: max_points must be at least 1 (cachable: [] caches nothing), got 0")
    ttls = entry.get("ttls")
    if ttls is not None and (not isinstance(ttls, list) or not ttls or any(t not in TTL_SECONDS for t in ttls)):
        raise ValueError(f"{where}: ttls must be a non-empty list of {sorted(TTL_SECONDS)}, got {ttls!r}")
    if ttls is not None:
        _check_ttls(where, model_id if model_id is not None else where, ttls, entry)
    cachable = entry.get("cachable")
    if cachable is not None and (not isinstance(cachable, list) or any(f not in _CACHABLE for f in cachable)):
        raise ValueError(f"{where}: cachable must be a list of {list(_CACHABLE)}, got {cachable!r}")
    if entry.get("family") not in (None, "claude", "nova", "openai"):
        raise ValueError(f"{where}: family must be 'claude', 'nova' or 'openai', got {entry['family']!r}")
    for key in _PRICE_FIELDS:
        value = entry.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e12
        ):  # NaN and infinity fail the range check too
            raise ValueError(f"{where}: {key} must be a finite price >= 0 (USD per 1M tokens), got {value!r}")
    if model_id is not None:
        _check_prices(where, model_id, entry)


def _check_ttls(where: str, model_id: str, ttls: list[str], entry: dict[str, Any]) -> None:
    """The TTLs an entry offers must be ones a bill can price and every placement can use: the 5-minute TTL (the
    one a cache point that names no TTL gets, which is what every placement sends), and the 1-hour TTL only with
    its write price (the entry's ``cache_write_1h``, or the shipped table's)."""
    if "5m" not in ttls:
        raise ValueError(
            f'{where}: ttls must include "5m" (a cache point that names no TTL lives 5 minutes, and every '
            f"placement sends such points), got {ttls!r}"
        )
    if "1h" in ttls and entry.get("cache_write_1h") is None:
        try:
            shipped = price_for(model_id).write_1h
        except KeyError:
            shipped = None
        if shipped is None:
            raise ValueError(f'{where}: ttls has "1h" but no cache_write_1h')


def _check_prices(where: str, model_id: str, entry: dict[str, Any]) -> None:
    """An entry that prices a model the shipped tables do not must give the four prices a bill needs; a cache read
    dearer than uncached input is a slip (a read is a discount on input: Anthropic, Bedrock and OpenAI all bill it
    at a tenth to a half of the input price), warned about, not refused."""
    given = [k for k in _PRICE_FIELDS if entry.get(k) is not None]
    try:
        price_for(model_id)
    except KeyError:
        missing = [k for k in _NEEDED_PRICES if entry.get(k) is None]
        if given and missing:
            raise ValueError(
                f"{where}: not in the shipped price table, so the entry needs {', '.join(_NEEDED_PRICES)}; "
                f"missing {', '.join(missing)}"
            ) from None
    input_side = [entry.get(k) for k in ("input", "cache_write_5m", "cache_write_1h", "cache_read")]
    if given and all(v == 0 for v in input_side if v is not None) and entry.get("input") is not None:
        raise ValueError(
            f"{where}: every input-side price is 0 (input, cache_write_5m, cache_read): each placement would cost "
            "$0, so the replay has nothing to compare; give the model's prices (USD per 1M tokens)"
        )
    read, plain = entry.get("cache_read"), entry.get("input")
    if read is not None and plain is not None and read > plain:
        warnings.warn(
            f"{where}: cache_read ({read:g} USD per 1M tokens) is more than input ({plain:g}): a cache read is "
            "billed below the input price by every provider; check the entry",
            TranscriptWarning,
            stacklevel=4,
        )


class ModelTable:
    """Cache rules and prices per model id, memoised.

    Args:
        overrides: ``{model_id: {field: value}}`` (see the module docstring), e.g. from ``load_overrides``.
        min_tokens: minimum tokens per cache point for every model (applied after ``overrides``); ``None`` keeps
            the table's.
        source: where ``overrides`` came from (the ``--models`` file name), named by ``price_source``.

    Raises:
        ValueError: a bad override entry or ``min_tokens`` (named in the message).
    """

    def __init__(
        self,
        overrides: dict[str, dict[str, Any]] | None = None,
        min_tokens: int | None = None,
        source: str | None = None,
    ) -> None:
        if min_tokens is not None and (
            isinstance(min_tokens, bool) or not isinstance(min_tokens, int) or not 0 <= min_tokens <= MAX_MIN_TOKENS
        ):
            raise ValueError(f"min_tokens must be an integer from 0 to {MAX_MIN_TOKENS:,}, got {min_tokens!r}")
        self._overrides: dict[str, dict[str, Any]] = {}
        for model_id, entry in (overrides or {}).items():
            if not str(model_id).strip():
                raise ValueError(f"a model id must not be empty, got {model_id!r}")
            _check_entry(str(model_id), entry)
            self._overrides[base_model_id(str(model_id))] = entry
        self._min_tokens = min_tokens
        self._source = source
        self._rules: dict[str, CacheRules] = {}
        self._prices: dict[str, ModelPrice] = {}

    @property
    def overridden(self) -> bool:
        """Whether any entry differs from the shipped tables."""
        return bool(self._overrides) or self._min_tokens is not None

    def rules(self, model_id: str) -> CacheRules:
        """The cache rules of ``model_id`` (table entry, then the override, then ``min_tokens``)."""
        rules = self._rules.get(model_id)
        if rules is None:
            entry = self._overrides.get(base_model_id(model_id), {})
            known = openai_rules(model_id) if price_key(model_id)[0] == "openai" else provider_rules(model_id)
            if known is None:
                known = cache_rules(model_id) if not entry or in_model_table(model_id) else _user_rules(model_id, entry)
            rules = known
            changes: dict[str, Any] = {}
            if "min_tokens" in entry:
                changes["min_tokens"] = entry["min_tokens"]
            if "max_points" in entry:
                changes["max_points"] = entry["max_points"]
            if "ttls" in entry:
                changes["ttls_s"] = tuple(sorted({TTL_SECONDS[t] for t in entry["ttls"]}))
            if "family" in entry:
                changes["family"] = entry["family"]
            if "cachable" in entry:
                changes["cachable"] = frozenset(entry["cachable"])
            if changes and not rules.supports_cache and "min_tokens" in entry:
                changes["supports_cache"] = True
            if self._min_tokens is not None:
                changes["min_tokens"] = self._min_tokens
            rules = self._rules[model_id] = dataclasses.replace(rules, **changes) if changes else rules
        return rules

    def price_source(self, model_id: str) -> str:
        """Where the prices of ``model_id`` come from: its provider's pricing page and the day it was read
        (``promptcache._price_tables``), the user's file (``source``, else "model overrides") when its
        entry sets them all or the model is not in the shipped prices, or both."""
        entry = self._overrides.get(base_model_id(model_id), {})
        given = [k for k in _PRICE_FIELDS if entry.get(k) is not None]
        try:
            shipped = price_for(model_id)
            page = f"{shipped.source} (read {shipped.as_of})"
        except KeyError:
            shipped, page = None, ""
        if not given and shipped is not None:
            return page
        user = f"user file {self._source}" if self._source else "model overrides"
        if shipped is None or len(given) == len(_PRICE_FIELDS):
            return user
        return f"{user} ({', '.join(given)}); the rest {page}"

    def price(self, model_id: str) -> ModelPrice:
        """The prices of ``model_id``. Raises ``KeyError`` (naming it) when neither the table nor an override has
        all four input-side prices."""
        price = self._prices.get(model_id)
        if price is None:
            entry = self._overrides.get(base_model_id(model_id), {})
            try:
                base: ModelPrice | None = price_for(model_id)
            except KeyError:
                if not all(entry.get(k) is not None for k in ("input", "output", "cache_write_5m", "cache_read")):
                    raise
                base = None
            family = entry.get("family") or (base.family if base else "claude")
            fields = {"input": "input", "output": "output", "cache_write_5m": "write_5m", "cache_read": "read"}
            if base is not None and not any(k in entry for k in (*_PRICE_FIELDS, "family")):
                price = base
            elif base is not None:  # a partial override: the named fields change, the tier is dropped
                changes: dict[str, Any] = {f: float(entry[k]) for k, f in fields.items() if k in entry}
                if "cache_write_1h" in entry:
                    changes["write_1h"] = _opt(entry["cache_write_1h"])
                price = dataclasses.replace(base, family=family, long=None, long_above=None, **changes)
            else:
                price = ModelPrice(
                    float(entry["input"]),
                    float(entry["output"]),
                    float(entry["cache_write_5m"]),
                    _opt(entry.get("cache_write_1h")),
                    float(entry["cache_read"]),
                    family,
                    "user",
                )
            self._prices[model_id] = price
        return price


def _user_rules(model_id: str, entry: dict[str, Any]) -> CacheRules:
    """The rules of a model the user defined (not in the tables): the entry's, defaults for the rest."""
    family = entry.get("family") or ("nova" if "nova" in base_model_id(model_id) else "claude")
    ttls = entry.get("ttls") or ["5m"]
    cachable = entry.get("cachable")
    return CacheRules(
        model_id,
        int(entry.get("min_tokens", _USER_MIN_TOKENS)),
        int(entry.get("max_points", _USER_MAX_POINTS)),
        tuple(sorted({TTL_SECONDS[t] for t in ttls})),
        frozenset(cachable) if cachable is not None else _FAMILY_CACHABLE[family],
        True,
        family,
    )


def _opt(value: Any) -> float | None:
    return None if value is None else float(value)
