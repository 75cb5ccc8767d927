"""What each plugin did: counts kept in the process (``stats()``) and, when installed, OpenTelemetry metrics.

Every plugin instance owns a `PluginMetrics` and calls it with one line where something happens (a hit, a
miss, a write, an error, tokens or dollars saved). Two ways out:

- ``plugin.stats()`` returns a `PluginStats` snapshot (a frozen dataclass; counts since the plugin was made
  or since ``stats(reset=True)``).
- With ``opentelemetry-api`` installed (``pip install "promptcache[otel]"``), the same counts are OpenTelemetry
  observable counters on the Meter ``"promptcache"``: ``promptcache.<plugin>.<event>``, e.g.
  ``promptcache.response_cache.hits``, with the attributes ``plugin`` (the plugin kind) and ``agent`` (the
  instance's label, e.g. the ResponseCache ``agent_id``), read when the SDK collects. The global
  ``MeterProvider`` is used unless `set_meter_provider` names one. Without the package nothing is exported.

Cost on the call path: a count is two list increments under a lock (``python bench/metrics.py``); OpenTelemetry
is never called there.

Events (all monotonic counters): ``hits``, ``misses``, ``writes``, ``errors`` (count), ``input_tokens_saved``,
``output_tokens_saved``, ``cache_read_tokens``, ``cache_write_tokens`` (tokens) and ``dollars_saved`` (USD). What each
means for each plugin is in the plugin's ``stats()`` docstring. Dollars use the Bedrock on-demand price table of
`promptcache._pricing` when the model id is in it; for any other model no dollars are counted (tokens
still are).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, fields
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation

__all__ = ["EVENTS", "METER_NAME", "PluginMetrics", "PluginStats", "otel_available", "set_meter_provider"]

METER_NAME = "promptcache"
"""The OpenTelemetry Meter (instrumentation scope) every promptcache counter belongs to."""

_T = TypeVar("_T")

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
"""Counter names, in `PluginStats` field order; the OpenTelemetry instrument is ``promptcache.<plugin>.<event>``."""

_UNITS = {"hits": "{call}", "misses": "{call}", "writes": "{entry}", "errors": "{error}", "dollars_saved": "USD"}
_INDEX = {event: i for i, event in enumerate(EVENTS)}

_otel: ModuleType | None
try:  # optional: the `otel` extra
    from opentelemetry import metrics as _otel_api

    _otel = _otel_api
except ImportError:  # pragma: no cover - exercised when the extra is not installed
    _otel = None


class _Registry:
    """Cumulative counts per (plugin, agent), shared by every instance with that label, and the OpenTelemetry
    instruments reading them.

    Counting never calls OpenTelemetry: a count is two list increments under a lock. The instruments are
    *observable* counters whose callbacks read these rows when a reader collects (e.g. every export interval),
    so the SDK's per-measurement work (attribute hashing, aggregation) stays off the plugins' call path.
    """

    lock = threading.Lock()
    rows: dict[tuple[str, str | None], list[float]] = {}
    provider: MeterProvider | None = None
    registered: set[str] = set()  # plugin kinds with instruments on the current provider's meter


def otel_available() -> bool:
    """True when ``opentelemetry-api`` is importable (the counts are also exported to OpenTelemetry)."""
    return _otel is not None


def set_meter_provider(provider: MeterProvider | None) -> None:
    """Export promptcache's counters through ``provider`` (an OpenTelemetry ``MeterProvider``) instead of the
    global one (``None``: back to the global provider); the counters of every plugin kind seen so far are
    registered on it at once.

    Raises:
        RuntimeError: ``opentelemetry-api`` is not installed.
        TypeError: ``provider`` has no ``get_meter`` method.
    """
    if _otel is None:
        raise RuntimeError('set_meter_provider needs opentelemetry-api: pip install "promptcache[otel]"')
    if provider is not None and not callable(getattr(provider, "get_meter", None)):
        raise TypeError(f"provider must be an OpenTelemetry MeterProvider, got {type(provider).__name__}")
    with _Registry.lock:
        _Registry.provider = provider
        kinds = {plugin for plugin, _ in _Registry.rows}
        _Registry.registered = set()
    for plugin in sorted(kinds):
        _register(plugin)


def _register(plugin: str) -> None:
    """Create the observable counters ``promptcache.<plugin>.<event>`` on the current meter (once per provider)."""
    if _otel is None:
        return
    with _Registry.lock:
        if plugin in _Registry.registered:
            return
        _Registry.registered.add(plugin)
        provider = _Registry.provider
    meter = provider.get_meter(METER_NAME) if provider is not None else _otel.get_meter(METER_NAME)
    for event in EVENTS:
        meter.create_observable_counter(
            f"{METER_NAME}.{plugin}.{event}",
            callbacks=[_observe(plugin, _INDEX[event], _otel)],
            unit=_UNITS.get(event, "{token}"),
            description=f"promptcache {plugin.replace('_', ' ')}: {event.replace('_', ' ')}",
        )


def _observe(plugin: str, index: int, api: ModuleType) -> Callable[[CallbackOptions], list[Observation]]:
    def callback(options: CallbackOptions) -> list[Observation]:
        with _Registry.lock:
            rows = [(agent, row[index]) for (kind, agent), row in _Registry.rows.items() if kind == plugin]
        return [
            api.Observation(value, {"plugin": plugin} if agent is None else {"plugin": plugin, "agent": agent})
            for agent, value in rows
            if value
        ]

    return callback


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
        dollars_saved: USD saved per `promptcache._pricing` (models in its table only; may be negative
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
    """The counters of one plugin instance (thread-safe). Plugins call `hit`, `miss`, `write`,
    `error`, `saved` or `lookup`; `snapshot` reads them.

    Args:
        plugin: the plugin kind, used in instrument names (``promptcache.<plugin>.<event>``): lowercase words joined
            by ``_``.
        agent: the instance's label (the ``agent`` attribute of its data points), or ``None``. Instances with the
            same ``plugin`` and ``agent`` add up in OpenTelemetry; each keeps its own ``snapshot()``.

    Raises:
        ValueError: ``plugin`` is not lowercase ``[a-z_]`` text.
    """

    __slots__ = ("_own", "_row", "agent", "plugin")

    def __init__(self, plugin: str, agent: str | None = None) -> None:
        if (
            not isinstance(plugin, str)
            or not plugin
            or not all(c.isascii() and (c.islower() or c == "_") for c in plugin)
        ):
            raise ValueError(f"plugin must be lowercase words joined by '_', got {plugin!r}")
        if agent is not None and not isinstance(agent, str):
            raise TypeError(f"agent must be a str or None, got {type(agent).__name__}: {agent!r}")
        self.plugin = plugin
        self.agent = agent
        self._own = [0.0] * len(EVENTS)
        with _Registry.lock:
            self._row = _Registry.rows.setdefault((plugin, agent), [0.0] * len(EVENTS))
        _register(plugin)

    # -- counting (the one-line calls) -------------------------------------------------------------------------
    def _add(self, index: int, amount: float) -> None:
        with _Registry.lock:
            self._own[index] += amount
            self._row[index] += amount

    def hit(self) -> None:
        """One hit."""
        self._add(0, 1)

    def miss(self) -> None:
        """One miss."""
        self._add(1, 1)

    def write(self) -> None:
        """One entry written."""
        self._add(2, 1)

    def error(self) -> None:
        """One failure turned into a miss or a skipped write."""
        self._add(3, 1)

    def stored(self, ok: bool) -> bool:
        """Count a write when ``ok``, else an error; returns ``ok``."""
        self._add(2 if ok else 3, 1)
        return ok

    def lookup(self, found: _T) -> _T:
        """Count a hit when ``found`` is truthy (a reply, a non-empty list of matches), else a miss; returns
        ``found`` (so a plugin's ``return x`` becomes ``return self.metrics.lookup(x)``)."""
        self._add(0 if found else 1, 1)
        return found

    def saved(
        self,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        dollars: float | None = None,
    ) -> None:
        """Tokens (counts) and dollars (USD; ``None``: unknown, not counted) saved by one call, in one update."""
        amounts = (input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, dollars or 0.0)
        with _Registry.lock:
            for index, amount in enumerate(amounts, start=4):
                self._own[index] += amount
                self._row[index] += amount

    # -- reading -----------------------------------------------------------------------------------------------
    def snapshot(self, reset: bool = False) -> PluginStats:
        """This instance's counts as `PluginStats`; with ``reset=True`` they start again at zero
        (the OpenTelemetry counters are cumulative and are not reset)."""
        with _Registry.lock:
            counts = list(self._own)
            if reset:
                self._own = [0.0] * len(EVENTS)
        ints = {event: int(counts[i]) for i, event in enumerate(EVENTS[:-1])}
        return PluginStats(self.plugin, self.agent, dollars_saved=counts[-1], **ints)

    def __repr__(self) -> str:
        return f"PluginMetrics({self.plugin!r}, agent={self.agent!r})"
