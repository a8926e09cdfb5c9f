"""Per-call metric update cost: the plain series of ``_features/observability/metrics.py`` against
``prometheus_client``'s labelled children, in memory and in multiprocess mode.

``python -m bench.metrics_modes`` (docs/architecture.md, "Libraries where they exist").
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import timeit

CALLS = 20_000


def _children(multiprocess: bool) -> float:
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

    registry = CollectorRegistry()
    calls = Counter("inv", "h", ["pack", "code", "origin"], registry=registry)
    latency = Histogram("lat", "h", ["pack"], registry=registry)
    mode = {"multiprocess_mode": "livesum"} if multiprocess else {}
    flying = Gauge("fl", "h", ["pack"], registry=registry, **mode)  # type: ignore[arg-type]

    def call() -> None:  # what one invocation updates
        gauge = flying.labels("p")
        gauge.inc()
        gauge.dec()
        calls.labels("p", "ok", "none").inc()
        latency.labels("p").observe(0.003)

    return min(timeit.repeat(call, number=CALLS, repeat=5)) / CALLS * 1e6


def _plain() -> float:
    from control_plane._features.observability.metrics import _PackSeries

    series = _PackSeries(threading.Lock())

    def call() -> None:
        with series.lock:
            series.in_flight += 1
        with series.lock:
            series.in_flight -= 1
            key = ("ok", "none")
            series.invocations[key] = series.invocations.get(key, 0) + 1
            series.buckets[3] += 1
            series.sum += 0.003

    return min(timeit.repeat(call, number=CALLS, repeat=5)) / CALLS * 1e6


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(f"{_children(multiprocess=True):.2f}")
        return
    with tempfile.TemporaryDirectory() as directory:
        env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": directory}
        child = [sys.executable, "-m", "bench.metrics_modes", "--child"]
        done = subprocess.run(child, env=env, capture_output=True, text=True, check=True)
    print(f"plain series (_features/observability/metrics.py):         {_plain():6.2f} us per call")
    print(f"prometheus_client children, in memory:     {_children(multiprocess=False):6.2f} us")
    print(f"prometheus_client children, multiprocess:  {float(done.stdout):6.2f} us")


if __name__ == "__main__":
    main()
