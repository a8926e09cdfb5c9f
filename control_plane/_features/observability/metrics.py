"""Prometheus metrics (docs/observability.md); :class:`Metrics` is a built-in plugin on the call
hooks.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.exposition import start_http_server
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from control_plane._kernel.hookspecs import hookimpl
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.registry import LoadedPack, LoadFailure
from control_plane._kernel.rejection import REASONS

if TYPE_CHECKING:
    from control_plane._features.observability.events import ErrorEvent

__all__ = [
    "LATENCY_BUCKETS",
    "NAMESPACE",
    "OUTPUT_CHANNELS",
    "REJECTION_REASONS",
    "SEVERITIES",
    "STALL_SECONDS",
    "Metrics",
    "start_metrics_server",
]

NAMESPACE = "capability_packs"

#: Seconds; fine at the low end, where a no-op pack lives (~100 us), up to a minute.
LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)

_OK = "ok"
_NO_ORIGIN = "none"
_CONTROL_PLANE = "control_plane"
#: Validation severities (``validation_findings_total``).
SEVERITIES = ("pass", "warn", "fail")
#: Channels whose dropped lines ``output_dropped_total`` counts (each exists at zero).
OUTPUT_CHANNELS = ("events", "log")
#: A loop held longer than this counts as a stall (``event_loop_stalls_total``).
STALL_SECONDS = 0.1
#: Reasons ``rejected_requests_total`` counts: the closed rejection vocabulary.
REJECTION_REASONS: tuple[str, ...] = tuple(REASONS)


class _Registry(CollectorRegistry):
    """A ``CollectorRegistry`` that exposes no ``*_created`` samples (this registry only:
    the process-wide ``disable_created_metrics()`` would change other libraries' too)."""

    def collect(self) -> Iterable[Metric]:
        for metric in super().collect():
            if any(sample.name.endswith("_created") for sample in metric.samples):
                kept: list[Sample] = [s for s in metric.samples if not s.name.endswith("_created")]
                metric.samples = kept
            yield metric


_INVOCATIONS_HELP = (
    "Invocations that reached a pack, by pack, the caller's code (ok on success) "
    "and origin (none on success)."
)
_LATENCY_HELP = "Wall time of invocations that reached a pack, input check to outcome."
_FINDINGS_HELP = "Validation checks returned by packs, by severity (pass, warn, fail)."
_IN_FLIGHT_HELP = "Invocations whose handler is running now."
_LE = (*(floatToGoString(bound) for bound in LATENCY_BUCKETS), "+Inf")  # type: ignore[no-untyped-call]
_OK_KEY = (_OK, _NO_ORIGIN)


class _PackSeries:
    """One pack's per-call series, as plain numbers (changed under ``lock`` only)."""

    __slots__ = ("buckets", "findings", "in_flight", "invocations", "lock", "sum")

    def __init__(self, lock: threading.Lock) -> None:
        self.lock = lock
        #: (code, origin) -> calls.
        self.invocations: dict[tuple[str, str], int] = {_OK_KEY: 0}
        #: Calls per latency bucket (not cumulative); the last one is ``+Inf``.
        self.buckets = [0] * len(_LE)
        self.sum = 0.0
        self.in_flight = 0
        #: severity -> checks (validating packs).
        self.findings: dict[str, int] = {}

    def leave(self) -> None:
        """The end of a call counted in ``in_flight`` (the start listener's end)."""
        with self.lock:
            self.in_flight -= 1


class _LiveCollector:
    """Metrics read at scrape time: the packs' per-call series, and counters the runtime
    keeps anyway."""

    def __init__(self) -> None:
        #: Packs whose contract-violation series exist at zero.
        self.packs: tuple[str, ...] = ()
        self.contract_sources: list[Callable[[], Mapping[str, int]]] = []
        self.dropped_sources: list[Callable[[], int]] = []
        #: channel (``events``, ``log``) -> counters of what its bounded queue dropped.
        self.output_sources: dict[str, list[Callable[[], int]]] = {
            channel: [] for channel in OUTPUT_CHANNELS
        }
        #: The serving event loop's health: (longest stall in seconds, stalls counted).
        self.loop_sources: list[Callable[[], tuple[float, int]]] = []
        self.answer_sources: list[Callable[[], tuple[int, int]]] = []
        self.lock = threading.Lock()
        self.series: dict[str, _PackSeries] = {}

    def _calls(self) -> Iterable[Metric]:
        invocations = CounterMetricFamily(
            f"{NAMESPACE}_invocations", _INVOCATIONS_HELP, labels=["pack", "code", "origin"]
        )
        latency = HistogramMetricFamily(
            f"{NAMESPACE}_invocation_duration_seconds", _LATENCY_HELP, labels=["pack"]
        )
        findings = CounterMetricFamily(
            f"{NAMESPACE}_validation_findings", _FINDINGS_HELP, labels=["pack", "severity"]
        )
        in_flight = GaugeMetricFamily(f"{NAMESPACE}_in_flight", _IN_FLIGHT_HELP, labels=["pack"])
        with self.lock:  # one consistent snapshot
            snapshot = [
                (pack, dict(s.invocations), list(s.buckets), s.sum, s.in_flight, dict(s.findings))
                for pack, s in self.series.items()
            ]
        for pack, calls, buckets, total, flying, checks in snapshot:
            for (code, origin), count in calls.items():
                invocations.add_metric([pack, code, origin], count)
            cumulative, running = [], 0
            for le, count in zip(_LE, buckets, strict=True):
                running += count
                cumulative.append((le, running))
            latency.add_metric([pack], cumulative, total)
            in_flight.add_metric([pack], flying)
            for severity, count in checks.items():
                findings.add_metric([pack, severity], count)
        return (invocations, latency, findings, in_flight)

    def collect(self) -> Iterable[Metric]:
        yield from self._calls()
        violations = CounterMetricFamily(
            f"{NAMESPACE}_contract_violations",
            "Undeclared pack-specific codes raised by a pack (each became internal_error).",
            labels=["pack"],
        )
        totals: dict[str, int] = dict.fromkeys(self.packs, 0)
        for source in list(self.contract_sources):
            for pack, count in dict(source()).items():
                totals[pack] = totals.get(pack, 0) + count
        for pack in sorted(totals):
            violations.add_metric([pack], totals[pack])
        yield violations
        dropped = CounterMetricFamily(
            f"{NAMESPACE}_event_store_dropped",
            "Incidents and error events the incident store could not write (queue full or "
            "write failed).",
        )
        dropped.add_metric([], sum(source() for source in list(self.dropped_sources)))
        yield dropped
        output = CounterMetricFamily(
            f"{NAMESPACE}_output_dropped",
            "Error events and log lines dropped because their consumer stalled (a full "
            "bounded queue: a FIFO nobody reads, stderr undrained, a sink that hangs).",
            labels=["channel"],
        )
        for channel, sources in self.output_sources.items():
            output.add_metric([channel], sum(source() for source in list(sources)))
        yield output
        health = [source() for source in list(self.loop_sources)]
        longest = GaugeMetricFamily(
            f"{NAMESPACE}_event_loop_longest_stall_seconds",
            "The longest time the serving event loop ran one thing without coming back to "
            "its other callers, since start.",
        )
        longest.add_metric([], max((h[0] for h in health), default=0.0))
        yield longest
        stalls = CounterMetricFamily(
            f"{NAMESPACE}_event_loop_stalls",
            f"Times the serving event loop was held for more than {STALL_SECONDS:g}s.",
        )
        stalls.add_metric([], sum(h[1] for h in health))
        yield stalls
        answers = [source() for source in list(self.answer_sources)]
        held = GaugeMetricFamily(
            f"{NAMESPACE}_answer_bytes_held",
            "Bytes of answers handed to grpc and not yet sent (callers that do not read "
            "hold theirs); bounded by the answer budget.",
        )
        held.add_metric([], sum(a[0] for a in answers))
        yield held
        closed = CounterMetricFamily(
            f"{NAMESPACE}_answer_connections_closed",
            "Connections closed for holding the most unread bytes past the answer budget.",
        )
        closed.add_metric([], sum(a[1] for a in answers))
        yield closed

    def describe(self) -> Iterable[Metric]:
        return self.collect()


class Metrics:
    """Every control-plane metric; a plugin on the call hooks that keep them."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else _Registry()
        r = self.registry
        self.plugin_load_failures = Gauge(
            "plugin_load_failures",
            "Load failures per plugin (plugin not importable, or a pack rejected at load).",
            ["plugin"],
            namespace=NAMESPACE,
            registry=r,
        )
        self.rejected = Counter(
            "rejected_requests",
            "Requests refused before any pack ran, by reason (unknown_pack, invalid_input, "
            "overloaded, ...).",
            ["reason"],
            namespace=NAMESPACE,
            registry=r,
        )
        self._live = _LiveCollector()
        r.register(self._live)
        self._series = self._live.series
        self._lock = self._live.lock
        self._rejected: dict[str, Any] = {}
        self._server: Any = None
        self._server_thread: threading.Thread | None = None

    # -- series -------------------------------------------------------------------------

    def _pack(self, pack: str) -> _PackSeries:
        series = self._series.get(pack)
        if series is None:
            with self._lock:
                series = self._series.get(pack)
                if series is None:
                    series = self._series[pack] = _PackSeries(self._lock)
        return series

    def prime(self, packs: Iterable[LoadedPack]) -> None:
        """Create every series ``packs`` can produce, at zero."""
        names: list[str] = []
        for loaded in packs:
            pack = loaded.name
            names.append(pack)
            series = self._pack(pack)
            with self._lock:
                for code in loaded.vocabulary:
                    for origin in (f"pack:{pack}", _CONTROL_PLANE):
                        series.invocations.setdefault((code, origin), 0)
                if loaded.validates:
                    for severity in SEVERITIES:
                        series.findings.setdefault(severity, 0)
        for reason in REJECTION_REASONS:
            self._rejection(reason)
        self._live.packs = tuple(dict.fromkeys((*self._live.packs, *names)))

    # -- hooks (a built-in plugin: install() registers it with the invoker) ----------------

    def count(self, pack: str, code: str, origin: str) -> None:
        """Count one call of ``pack`` that ended with ``code`` from ``origin`` (no latency:
        an outcome built outside the invoker)."""
        series = self._pack(pack)
        key = (code, origin)
        with self._lock:
            calls = series.invocations
            calls[key] = calls.get(key, 0) + 1

    @hookimpl
    def call_finished(self, pack: LoadedPack, outcome: Outcome, elapsed_s: float) -> None:
        """Count the outcome, its latency and its findings."""
        series = self._pack(pack.name)
        error = outcome.error
        key = _OK_KEY if error is None else (error.code, error.origin)
        # le="x" counts durations <= x: the first bound not below the duration.
        bucket = bisect_left(LATENCY_BUCKETS, elapsed_s)
        validation = outcome.validation
        with self._lock:
            calls = series.invocations
            calls[key] = calls.get(key, 0) + 1
            series.buckets[bucket] += 1
            series.sum += elapsed_s
            if validation is not None and validation.checks:
                findings = series.findings
                for check in validation.checks:
                    findings[check.severity] = findings.get(check.severity, 0) + 1

    @hookimpl
    def call_started(self, pack: LoadedPack) -> Callable[[], None]:
        """In-flight up now, down when the call ends."""
        series = self._pack(pack.name)
        with self._lock:
            series.in_flight += 1
        return series.leave

    @hookimpl
    def request_refused(self, event: ErrorEvent) -> None:
        """Count the refusal under its reason."""
        self.reject(event.code)

    def _rejection(self, reason: str) -> Any:
        child = self._rejected.get(reason)
        if child is None:
            child = self._rejected[reason] = self.rejected.labels(reason)
        return child

    def reject(self, reason: str) -> None:
        """Count a request refused before any pack ran."""
        self._rejection(reason).inc()

    def set_load_failures(self, failures: Iterable[LoadFailure]) -> None:
        """Set the plugin-load-failure gauge from the registry's failures."""
        counts: dict[str, int] = {}
        for failure in failures:
            counts[failure.plugin] = counts.get(failure.plugin, 0) + 1
        self.plugin_load_failures.clear()
        for plugin, count in counts.items():
            self.plugin_load_failures.labels(plugin).set(count)

    def watch_contract_violations(self, source: Callable[[], Mapping[str, int]]) -> None:
        """Report ``source()`` (pack -> count, e.g. an invoker's) as contract violations."""
        self._live.contract_sources.append(source)

    def unwatch_contract_violations(self, source: Callable[[], Mapping[str, int]]) -> None:
        self._live.contract_sources[:] = [s for s in self._live.contract_sources if s != source]

    def watch_dropped(self, source: Callable[[], int]) -> None:
        """Report ``source()`` (e.g. an incident store's ``dropped``) as dropped records."""
        self._live.dropped_sources.append(source)

    def unwatch_dropped(self, source: Callable[[], int]) -> None:
        self._live.dropped_sources[:] = [s for s in self._live.dropped_sources if s != source]

    def watch_output_dropped(self, channel: str, source: Callable[[], int]) -> None:
        """Report ``source()`` as what ``channel``'s bounded queue dropped."""
        self._live.output_sources.setdefault(channel, []).append(source)

    def unwatch_output_dropped(self, channel: str, source: Callable[[], int]) -> None:
        sources = self._live.output_sources.get(channel, [])
        sources[:] = [s for s in sources if s != source]

    def watch_loop(self, source: Callable[[], tuple[float, int]]) -> None:
        """Report ``source()`` -- (longest stall in seconds, stalls) -- as the event loop's
        health (``wire.loop_health.LoopHealth``)."""
        self._live.loop_sources.append(source)

    def unwatch_loop(self, source: Callable[[], tuple[float, int]]) -> None:
        self._live.loop_sources[:] = [s for s in self._live.loop_sources if s != source]

    def watch_answers(self, source: Callable[[], tuple[int, int]]) -> None:
        """Report ``source()`` -- (answer bytes held unsent, connections closed for them)
        -- as the answer budget's state (``wire.answers.AnswerBudget``)."""
        self._live.answer_sources.append(source)

    # -- exposition -------------------------------------------------------------------------

    def serve(self, port: int = 0, host: str = "127.0.0.1") -> int:
        """Serve ``/metrics`` over HTTP on ``host:port`` (0 picks a port); the bound port."""
        if self._server is not None:
            raise RuntimeError("the metrics endpoint is already being served")
        server, thread = start_http_server(port, addr=host, registry=self.registry)
        self._server, self._server_thread = server, thread
        return int(server.server_port)

    @property
    def port(self) -> int | None:
        """The port the endpoint listens on, or ``None`` when not serving."""
        return int(self._server.server_port) if self._server is not None else None

    def close(self) -> None:
        """Stop the HTTP endpoint, if serving."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._server_thread is not None:
            self._server_thread.join(5.0)
            self._server_thread = None


def start_metrics_server(port: int, host: str = "127.0.0.1", *, metrics: Metrics) -> int:
    """Serve ``metrics`` on ``host:port``; the bound port (``port=0`` picks a free one).

    Stop it with ``metrics.close()``.
    """
    return metrics.serve(port, host)
