"""Cost of the plugins' counters (promptcache._metrics): on the ResponseCache miss path, and per collection.

    python bench/metrics.py [--n 200000]

1. A ResponseCache miss makes two counter calls (``lookup(None)``: a miss; ``write()``: the reply stored). This times
   those two calls ``--n`` times, best of 5 (``time.perf_counter_ns``), with the OpenTelemetry SDK and an
   ``InMemoryMetricReader`` attached when installed (counting never calls OpenTelemetry, so the set-up does not
   matter; the figure shows it).
2. One collection (``InMemoryMetricReader.get_metrics_data()``, what an exporter does every interval) with 100
   plugin instances of one kind: the callbacks read the counts there, off the call path.

Compare with a create_agent turn: ``python bench/response_cache.py`` (a few milliseconds per turn).
"""

from __future__ import annotations

import argparse
import time

import promptcache._metrics as pm


def per_pair_ns(metrics: pm.PluginMetrics, n: int) -> float:
    """Best of 5: nanoseconds per (miss + write) pair."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter_ns()
        for _ in range(n):
            metrics.lookup(None)
            metrics.write()
        best = min(best, (time.perf_counter_ns() - start) / n)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200_000)
    args = parser.parse_args(argv)
    reader = None
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    except ImportError:
        setup = "no OpenTelemetry SDK"
    else:
        reader = InMemoryMetricReader()
        pm.set_meter_provider(MeterProvider(metric_readers=[reader]))
        setup = "OpenTelemetry SDK + InMemoryMetricReader"
    ns = per_pair_ns(pm.PluginMetrics("response_cache", "bench"), args.n)
    print(f"| measure | value |\n|---|---:|\n| ns per ResponseCache miss (lookup + write), {setup} | {ns:,.0f} |")
    if reader is not None:
        instances = [pm.PluginMetrics("response_cache", f"bench-{i}") for i in range(100)]
        for m in instances:
            m.hit()
        best = float("inf")
        for _ in range(20):
            start = time.perf_counter_ns()
            reader.get_metrics_data()
            best = min(best, time.perf_counter_ns() - start)
        print(f"| ms per collection, 100 instances x 9 counters | {best / 1e6:.2f} |")


if __name__ == "__main__":
    main()
