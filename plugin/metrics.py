"""What each plugin did: counts kept in the process (``stats()``) and, when installed, OpenTelemetry metrics.

Every plugin instance owns a :class:`PluginMetrics` and calls it with one line where something happens (a hit, a
miss, a write, an error, tokens or dollars saved). Two ways out:

- ``plugin.stats()`` returns a :class:`PluginStats` snapshot (a frozen dataclass; counts since the plugin was made
  or since ``stats(reset=True)``).
- With ``opentelemetry-api`` installed (``pip install "promptcache[otel]"``), the same counts go to OpenTelemetry
  counters on the Meter ``"promptcache"``: ``promptcache.<plugin>.<event>``, e.g.
  ``promptcache.response_cache.hits``, with the attributes ``plugin`` (the plugin kind) and ``agent`` (the
  instance's label, e.g. the ResponseCache ``agent_id``). Without the package every call is a plain counter
  increment (no-op on the OpenTelemetry side). The global ``MeterProvider`` is used unless
  :func:`set_meter_provider` names one.

Events (all monotonic counters): ``hits``, ``misses``, ``writes``, ``errors`` (count), ``input_tokens_saved``,
``output_tokens_saved``, ``cache_read_tokens``, ``cache_write_tokens`` (tokens) and ``dollars_saved`` (USD). What each
means for each plugin is in the plugin's ``stats()`` docstring. Dollars use the Bedrock on-demand price table of
:mod:`promptcache.replay.pricing` when the model id is in it; for any other model no dollars are counted (tokens
still are).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["EVENTS", "METER_NAME", "PluginMetrics", "PluginStats", "otel_available", "set_meter_provider"]

METER_NAME = "promptcache"
"""The OpenTelemetry Meter (instrumentation scope) every promptcache counter belongs to."""

EVENTS: tuple[str, ...] = (
    "hits",
    "misses",
    "writes",
    "errors",
    "input_tokens_saved",
    "output_tokens_saved",
    "cache_read_tokens",
    "cache_write_tokens",
    "dollars_saved",
)
"""Counter names, in :class:`PluginStats` field order; the OpenTelemetry instrument is ``promptcache.<plugin>.<event>``."""

_UNITS = {"dollars_saved": "USD"}
_UNIT_DEFAULT = {"hits": "{call}", "misses": "{call}", "writes": "{entry}", "errors": "{error}"}

try:  # optional: the `otel` extra
    from opentelemetry import metrics as _otel
except ImportError:  # pragma: no cover - exercised when the extra is not installed
    _otel = None


class _Binding:
    """The meter provider in use and a generation number bumped when it changes (instruments are then re-made)."""

    provider: Any = None
    generation = 0
    lock = threading.Lock()


def otel_available() -> bool:
    """True when ``opentelemetry-api`` is importable (the counters are also sent to OpenTelemetry)."""
    return _otel is not None


def set_meter_provider(provider: Any) -> None:
    """Send promptcache's counters to ``provider`` (an OpenTelemetry ``MeterProvider``) instead of the global one
    (``None``: back to the global provider). Instruments of existing plugins are re-made on their next count.

    Raises:
        RuntimeError: ``opentelemetry-api`` is not installed.
        TypeError: ``provider`` has no ``get_meter`` method.
    """
    if _otel is None:
        raise RuntimeError('set_meter_provider needs opentelemetry-api: pip install "promptcache[otel]"')
    if provider is not None and not callable(getattr(provider, "get_meter", None)):
        raise TypeError(f"provider must be an OpenTelemetry MeterProvider, got {type(provider).__name__}")
    with _Binding.lock:
        _Binding.provider = provider
        _Binding.generation += 1


def _meter() -> Any:
    provider = _Binding.provider
    return provider.get_meter(METER_NAME) if provider is not None else _otel.get_meter(METER_NAME)


@dataclass(frozen=True, slots=True)
class PluginStats:
    """A snapshot of one plugin instance's counts.

    Attributes:
        plugin: the plugin kind (``"response_cache"``, ``"cache_points"``, ``"typed_memory"``,
            ``"intention_cache"``, ``"intention_memory"``, ``"redis_cache"``).
        agent: the instance's label (e.g. the ResponseCache ``agent_id``), or ``None``.
        hits / misses / writes / errors: counts (what they count is the plugin's ``stats()`` docstring).
        input_tokens_saved / output_tokens_saved: tokens not billed (or billed at the cache-read price), where known.
        cache_read_tokens / cache_write_tokens: provider-reported prompt-cache tokens (Bedrock cache points).
        dollars_saved: USD saved per :mod:`promptcache.replay.pricing` (models in its table only; may be negative
            for cache points when cache writes cost more than the reads saved).
    """

    plugin: str
    agent: str | None
    hits: int = 0
    misses: int = 0
    writes: int = 0
    errors: int = 0
    input_tokens_saved: int = 0
    output_tokens_saved: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    dollars_saved: float = 0.0

    @property
    def lookups(self) -> int:
        """``hits + misses``."""
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float:
        """``hits / (hits + misses)``, 0.0 before any lookup."""
        return self.hits / self.lookups if self.lookups else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (for logging or JSON)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


class PluginMetrics:
    """The counters of one plugin instance (thread-safe). Plugins call :meth:`hit`, :meth:`miss`, :meth:`write`,
    :meth:`error` and :meth:`saved`; :meth:`snapshot` reads them.

    Args:
        plugin: the plugin kind, used in instrument names (``promptcache.<plugin>.<event>``): lowercase words joined
            by ``_``.
        agent: the instance's label (the ``agent`` attribute of every data point), or ``None``.

    Raises:
        ValueError: ``plugin`` is not lowercase ``[a-z_]`` text.
    """

    __slots__ = ("_attrs", "_counts", "_generation", "_instruments", "_lock", "agent", "plugin")

    def __init__(self, plugin: str, agent: str | None = None) -> None:
        if (
            not isinstance(plugin, str)
            or not plugin
            or not all(c.isascii() and (c.islower() or c == "_") for c in plugin)
        ):
            raise ValueError(f"plugin must be lowercase words joined by '_', got {plugin!r}")
        self.plugin = plugin
        self.agent = agent
        self._attrs = {"plugin": plugin} if agent is None else {"plugin": plugin, "agent": agent}
        self._counts: dict[str, float] = dict.fromkeys(EVENTS, 0)
        self._lock = threading.Lock()
        self._generation = -1
        self._instruments: dict[str, Any] = {}

    # -- counting (the one-line calls) -------------------------------------------------------------------------
    def _add(self, event: str, amount: float) -> None:
        with self._lock:
            self._counts[event] += amount
        if _otel is not None:
            self._instrument(event).add(amount, self._attrs)

    def hit(self) -> None:
        """One hit."""
        self._add("hits", 1)

    def miss(self) -> None:
        """One miss."""
        self._add("misses", 1)

    def write(self) -> None:
        """One entry written."""
        self._add("writes", 1)

    def error(self) -> None:
        """One failure turned into a miss or a skipped write."""
        self._add("errors", 1)

    def saved(
        self,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        dollars: float | None = None,
    ) -> None:
        """Tokens (counts) and dollars (USD; ``None``: unknown, not counted) saved by one call. Zeros are skipped."""
        for event, amount in (
            ("input_tokens_saved", input_tokens),
            ("output_tokens_saved", output_tokens),
            ("cache_read_tokens", cache_read_tokens),
            ("cache_write_tokens", cache_write_tokens),
            ("dollars_saved", dollars),
        ):
            if amount:
                self._add(event, amount)

    def lookup(self, found: Any) -> Any:
        """Count a hit when ``found`` is not ``None`` (or empty), else a miss; returns ``found`` (so a plugin's
        ``return x`` becomes ``return self.metrics.lookup(x)``)."""
        self._add("hits" if found else "misses", 1)
        return found

    # -- reading -----------------------------------------------------------------------------------------------
    def snapshot(self, reset: bool = False) -> PluginStats:
        """The counts now as :class:`PluginStats`; with ``reset=True`` the in-process counts start again at zero
        (OpenTelemetry counters are cumulative and are not reset)."""
        with self._lock:
            counts = dict(self._counts)
            if reset:
                self._counts = dict.fromkeys(EVENTS, 0)
        ints = {k: int(v) for k, v in counts.items() if k != "dollars_saved"}
        return PluginStats(self.plugin, self.agent, dollars_saved=float(counts["dollars_saved"]), **ints)

    # -- OpenTelemetry -----------------------------------------------------------------------------------------
    def _instrument(self, event: str) -> Any:
        if self._generation != _Binding.generation:
            self._instruments = {}
            self._generation = _Binding.generation
        inst = self._instruments.get(event)
        if inst is None:
            inst = _meter().create_counter(
                f"{METER_NAME}.{self.plugin}.{event}",
                unit=_UNITS.get(event, _UNIT_DEFAULT.get(event, "{token}")),
                description=f"promptcache {self.plugin.replace('_', ' ')}: {event.replace('_', ' ')}",
            )
            self._instruments[event] = inst
        return inst

    def __repr__(self) -> str:
        return f"PluginMetrics({self.plugin!r}, agent={self.agent!r})"
