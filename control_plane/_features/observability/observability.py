"""Observability in one call: :func:`install` registers metrics, error events and the
incident store as built-in plugins on an invoker's call hooks (docs/observability.md)."""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from control_plane._features.observability.events import (
    ErrorEvent,
    ErrorEvents,
    EventSink,
    FileSink,
    StreamSink,
    rfc3339,
)
from control_plane._features.observability.incident_backend import shown_location
from control_plane._features.observability.incident_store import (
    ENV_INCIDENT_DB,
    GroupBy,
    IncidentStore,
    IncidentStoreUnreadable,
    default_incident_db,
    elsewhere,
    remember_store,
)
from control_plane._features.observability.metrics import Metrics
from control_plane._kernel.errors import RequestRejected
from control_plane._kernel.incidents import Incident
from control_plane._kernel.invoke import Invoker
from control_plane._kernel.limits import ConfigError
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.registry import LoadFailure
from control_plane._kernel.rejection import Rejection
from control_plane._runtime.log_queue import dropped_lines

__all__ = [
    "IncidentNotFound",
    "Observability",
    "ObservabilityConfig",
    "aggregate_errors",
    "format_duration",
    "install",
    "install_configured",
    "parse_duration",
    "show_incident",
]

logger = logging.getLogger("capability_packs.observability")


@dataclasses.dataclass(frozen=True, slots=True)
class ObservabilityConfig:
    """How ``packctl serve`` (and ``packctl worker``) observe: built from the command line
    by ``_features/observability/observability_cli.py``, read by :func:`install_configured`."""

    #: Serve Prometheus metrics on this port (0 picks one; ``None``: off).
    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    #: Append error events (JSON lines) here instead of stderr.
    events_file: Path | None = None
    #: Write error events to a stream at all (stderr or ``events_file``).
    event_stream: bool = True
    #: Keep incidents and events in SQLite (``False``: in memory only).
    incident_store: bool = True
    #: The store's path (``None``: ``$CAPABILITY_PACKS_INCIDENT_DB`` or the default).
    #: A SQLite file, or a ``postgresql://`` URL (one store shared by every replica).
    incident_db: Path | str | None = None
    #: Seconds after which incidents and events are deleted (``None``: never).
    incident_retention: float | None = 30 * 86400.0
    incident_max_rows: int = 100_000


#: Seconds ``packctl serve`` lets error-event lines for stderr gather before a background
#: thread writes them (:class:`~control_plane._features.observability.events.StreamSink`).
STREAM_DELAY = 0.05


class IncidentNotFound(LookupError):
    """No incident under that reference id (unknown, or aged out of retention)."""


class Observability:
    """What :func:`install` attached to one invoker; ``close()`` undoes it."""

    def __init__(
        self,
        invoker: Invoker,
        *,
        events: ErrorEvents,
        metrics: Metrics,
        store: IncidentStore | None,
        owned_sinks: Sequence[FileSink | StreamSink] = (),
    ) -> None:
        self.invoker = invoker
        self.events = events
        self.metrics = metrics
        self.store = store
        self._owned_sinks = tuple(owned_sinks)
        self._contract_source: Callable[[], Mapping[str, int]] = lambda: dict(
            invoker.contract_violations
        )
        self._closed = False

    # -- what the wire layer calls ----------------------------------------------------------

    def emit_rejection(
        self,
        rejection: Rejection | RequestRejected | str,
        *,
        pack: str = "",
        message: str = "",
        request_id: str | None = None,
        correlation: Mapping[str, str] | None = None,
    ) -> ErrorEvent:
        """Count and emit a request refused before any pack ran (origin ``transport``).

        The metric is labelled by the rejection's reason only (caller-made pack names never
        become label values); see :meth:`ErrorEvent.rejection` for the arguments.
        """
        event = ErrorEvent.rejection(
            rejection, pack=pack, message=message, request_id=request_id, correlation=correlation
        )
        registry = self.invoker.registry
        if event.pack in registry:
            event = dataclasses.replace(event, version=registry.get(event.pack).version)
        if isinstance(rejection, RequestRejected) and rejection.reported:
            return event  # the invoker told request_refused already
        if isinstance(rejection, RequestRejected):
            rejection.reported = True
        hooks = self.invoker.hooks
        hooks.notify(hooks.refused, event)
        return event

    def record_outcome(self, outcome: Outcome, elapsed_s: float | None = None) -> None:
        """Emit the event for a failed outcome built outside the invoker (a server bug)."""
        if outcome.error is not None:
            self.events.emit(ErrorEvent.from_outcome(outcome, elapsed_s=elapsed_s))
            if outcome.pack in self.invoker.registry:
                self.metrics.count(outcome.pack, outcome.error.code, outcome.error.origin)

    def serve_metrics(self, port: int = 0, host: str = "127.0.0.1") -> int:
        """Serve ``/metrics`` on ``host:port`` (0 picks one); the bound port."""
        return self.metrics.serve(port, host)

    # -- lifecycle ----------------------------------------------------------------------------

    def flush(self) -> None:
        """Write what is queued now: the event stream's delayed lines, the store's rows."""
        self.events.flush()
        for sink in self._owned_sinks:
            if isinstance(sink, StreamSink):
                sink.flush()
        if self.store is not None:
            self.store.flush()

    def close(self) -> None:
        """Detach from the invoker, stop the metrics endpoint, flush and close the store."""
        if self._closed:
            return
        self._closed = True
        invoker = self.invoker
        invoker.hooks.unregister(self.metrics)
        invoker.hooks.unregister(self.events)
        self.metrics.unwatch_contract_violations(self._contract_source)
        self.metrics.close()
        # The sinks' queues first: what they hold still reaches the store and the files.
        self.metrics.unwatch_output_dropped("events", self._events_dropped)
        self.metrics.unwatch_output_dropped("log", dropped_lines)
        self.events.close()
        if self.store is not None:
            invoker.hooks.unregister(self.store)
            self.events.remove_sink(self.store.add_event)
            self.metrics.unwatch_dropped(self._dropped)
            self.store.close()
        for sink in self._owned_sinks:
            self.events.remove_sink(sink)
            sink.close()

    def _events_dropped(self) -> int:
        return self.events.dropped

    def _dropped(self) -> int:
        return self.store.dropped if self.store is not None else 0

    def __enter__(self) -> Observability:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def install(
    invoker: Invoker,
    *,
    load_failures: Iterable[LoadFailure] = (),
    events: ErrorEvents | None = None,
    store: IncidentStore | None = None,
    metrics: Metrics | None = None,
    event_sinks: Iterable[EventSink] = (),
) -> Observability:
    """Register metrics, error events and (optionally) the incident store as plugins on
    ``invoker``'s call hooks.

    :param load_failures: the registry's load failures, for the plugin-failure gauge.
    :param events: the emitter; by default one writing JSON lines to stderr. Pass
        ``ErrorEvents()`` for no stream.
    :param store: persist incidents and events here (``None``: in memory only). The
        returned object owns it: ``close()`` closes it.
    :param metrics: by default a fresh :class:`Metrics` on its own registry (not served
        until :meth:`Observability.serve_metrics`).
    :param event_sinks: more sinks, e.g. ``load_registry().event_sinks`` from plugins.
    """
    events = events if events is not None else ErrorEvents([StreamSink()], queued=True)
    metrics = metrics if metrics is not None else Metrics()
    for sink in event_sinks:
        events.add_sink(sink)
    obs = Observability(invoker, events=events, metrics=metrics, store=store)
    metrics.set_load_failures(load_failures)
    metrics.prime(invoker.registry)
    metrics.watch_contract_violations(obs._contract_source)
    metrics.watch_output_dropped("events", obs._events_dropped)
    metrics.watch_output_dropped("log", dropped_lines)
    invoker.hooks.register(metrics)
    invoker.hooks.register(events)
    if store is not None:
        invoker.hooks.register(store)
        # Only enqueues, as add_incident does on the loop: no sink thread in front of it.
        events.add_sink(store.add_event, queued=False)
        metrics.watch_dropped(obs._dropped)
    return obs


# -- durations ------------------------------------------------------------------------------

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")


def parse_duration(text: str) -> float | None:
    """Seconds in ``30s``, ``15m``, ``1h``, ``1h30m``, ``7d``, ``2w`` or a plain number.

    ``all`` (or an empty string) means no limit: ``None``. Raises ``ValueError`` otherwise.
    """
    value = text.strip().lower()
    if value in ("", "all"):
        return None
    try:
        seconds = float(value)
    except ValueError:
        pos, seconds = 0, 0.0
        for match in _DURATION.finditer(value):
            if match.start() != pos:
                break
            seconds += float(match.group(1)) * _UNITS[match.group(2)]
            pos = match.end()
        if pos != len(value) or pos == 0:
            raise ValueError(
                f"invalid duration {text!r}: use e.g. 30s, 15m, 1h, 1h30m, 7d or all"
            ) from None
    if not math.isfinite(seconds):  # "nan", "inf", "1e999": no window (use "all")
        raise ValueError(f"invalid duration {text!r}: not a finite number (all: no limit)")
    if seconds < 0:
        raise ValueError(f"invalid duration {text!r}: negative")
    return seconds


def format_duration(seconds: float | None) -> str:
    """The inverse of :func:`parse_duration` for display: ``3600`` -> ``1h``."""
    if seconds is None:
        return "all time"
    for unit in ("w", "d", "h", "m"):
        size = _UNITS[unit]
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


# -- CLI-ready views ----------------------------------------------------------------------------


def _incident_dict(incident: Incident) -> dict[str, Any]:
    return {
        "reference_id": incident.reference_id,
        "created_at": rfc3339(incident.created_at),
        "pack": incident.pack,
        "request_id": incident.request_id,
        "kind": incident.kind,
        "summary": incident.summary,
        "traceback": incident.traceback,
    }


def show_incident(store: IncidentStore, ref: str, *, as_json: bool = False) -> str:
    """One incident as text (or JSON); :class:`IncidentNotFound` when unknown."""
    incident = store.get(ref)
    if incident is None:
        shown = ref.strip()
        if len(shown) > 80:  # a reference id is 20 characters; echo a bounded head
            shown = f"{shown[:64]}... ({len(shown)} characters)"
        message = (
            f"no incident {shown!r} in {store.location} (unknown, or older than the store's "
            "retention)"
        )
        found, latest = elsewhere(ref.strip(), store.location)
        if found is not None:
            message += f"; it is in {found}: packctl incident --incident-db {found} {shown}"
        elif latest is not None:
            message += f"; the last server or worker started here used --incident-db {latest}"
        raise IncidentNotFound(message)
    data = _incident_dict(incident)
    if as_json:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
    head = [
        f"{key + ':':<14}{data[key]}"
        for key in ("reference_id", "created_at", "pack", "request_id", "kind", "summary")
    ]
    body = incident.traceback.rstrip() or "(no exception was recorded)"
    return "\n".join([*head, "", body])


def aggregate_errors(
    store: IncidentStore,
    since: float | None = 3600.0,
    by: GroupBy = "code",
    *,
    as_json: bool = False,
) -> str:
    """Error counts of the last ``since`` seconds grouped ``by`` code, pack or origin."""
    counts = store.errors(since=since, by=by)
    total = sum(count for _, count in counts)
    if as_json:
        return orjson.dumps(
            {
                "since_seconds": since,
                "by": by,
                "total": total,
                "counts": [{by: value, "count": count} for value, count in counts],
            },
            option=orjson.OPT_INDENT_2,
        ).decode()
    window = "all time" if since is None else f"the last {format_duration(since)}"
    if not counts:
        return f"no errors in {window}"
    width = max(len(by), len("total"), *(len(value) for value, _ in counts))
    digits = max(len("count"), len(str(total)))
    lines = [f"{by:<{width}}  {'count':>{digits}}"]
    lines += [f"{value:<{width}}  {count:>{digits}}" for value, count in counts]
    lines.append(f"{'-' * width}  {'-' * digits}")
    lines.append(f"{'total':<{width}}  {total:>{digits}}")
    lines.append(f"({window})")
    return "\n".join(lines)


def _open_store(config: ObservabilityConfig) -> IncidentStore | None:
    """The incident store of ``config``. A path that was asked for (``incident_db``,
    ``$CAPABILITY_PACKS_INCIDENT_DB``) must open, else :class:`ConfigError` (exit 2); the
    default one under the home directory may not (a service account without a writable
    home): then incidents stay in memory, a warning says so, and serving goes on."""
    try:
        store = IncidentStore(
            config.incident_db,
            max_age=config.incident_retention,
            max_rows=config.incident_max_rows,
        )
        remember_store(store.location)  # `packctl incident` points at it (not found)
        return store
    except (OSError, sqlite3.Error) as exc:
        path = shown_location(
            config.incident_db if config.incident_db is not None else default_incident_db()
        )
        reason = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, IncidentStoreUnreadable):  # says the store and why already
            raise ConfigError(f"{exc} (choose another --incident-db, or --no-incident-db)") from exc
        if config.incident_db is not None or os.environ.get(ENV_INCIDENT_DB):
            raise ConfigError(
                f"cannot open the incident store {path}: {reason} "
                "(choose another --incident-db PATH, or --no-incident-db)"
            ) from exc
        logger.warning(
            "incidents kept in memory only: cannot create %s (%s); --incident-db PATH keeps them",
            path,
            reason,
        )
        return None


def install_configured(
    invoker: Invoker,
    config: ObservabilityConfig,
    *,
    load_failures: Iterable[LoadFailure] = (),
    event_sinks: Iterable[EventSink] = (),
) -> Observability:
    """:func:`install` as ``config`` says; serves metrics when ``config.metrics_port`` is
    set (``obs.metrics.port`` is the bound port)."""
    owned: list[FileSink | StreamSink] = []
    if not config.event_stream:
        events = ErrorEvents(queued=True)
    elif config.events_file is not None:
        owned.append(FileSink(config.events_file))
        events = ErrorEvents(owned, queued=True)
    else:
        # Off the serving thread: lines written by a background thread, at most
        # STREAM_DELAY seconds after the event (closed, so flushed, with the observability).
        owned.append(StreamSink(delay=STREAM_DELAY))
        events = ErrorEvents(owned, queued=True)
    store = _open_store(config) if config.incident_store else None
    obs = install(
        invoker,
        load_failures=load_failures,
        events=events,
        store=store,
        event_sinks=event_sinks,
    )
    obs._owned_sinks = tuple(owned)
    if config.metrics_port is not None:
        try:
            obs.serve_metrics(config.metrics_port, config.metrics_host)
        except OSError as exc:  # a port someone holds: a usage error, not a traceback
            obs.close()
            raise ConfigError(
                metrics_port_error(config.metrics_host, config.metrics_port, exc)
            ) from None
    return obs


def metrics_port_error(host: str, port: int, exc: OSError) -> str:
    """What ``packctl serve`` says when ``--metrics-port`` cannot be served."""
    return (
        f"cannot serve metrics on {host}:{port}: {exc.strerror or exc}; choose another "
        "--metrics-port (0: any free one)"
    )
