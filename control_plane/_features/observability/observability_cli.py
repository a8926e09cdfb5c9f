"""``packctl incident``, ``packctl errors`` and ``packctl serve``'s observability options:
the command line of :mod:`control_plane._features.observability.observability`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from control_plane._features.observability.incident_backend import is_url
from control_plane._features.observability.incident_store import (
    IncidentStore,
    default_incident_db,
)
from control_plane._features.observability.observability import (
    IncidentNotFound,
    ObservabilityConfig,
    aggregate_errors,
    parse_duration,
    show_incident,
)
from control_plane._features.observability.tracing import PROTOCOLS, Tracing
from control_plane._kernel.hookspecs import hookimpl

if TYPE_CHECKING:
    from control_plane._runtime.runtime import Runtime

__all__ = [
    "add_commands",
    "add_serve_arguments",
    "add_serve_options",
    "configure",
    "observability_config",
    "tracing_from_args",
]


def _db_help() -> str:
    return (
        "incident database: a SQLite file, or postgresql://USER:PASSWORD@HOST/DB for one "
        "store shared by every replica and worker (default: $CAPABILITY_PACKS_INCIDENT_DB "
        f"or {default_incident_db()})"
    )


def _store_arg(text: str) -> Path | str:
    """``--incident-db``: a ``postgresql://`` URL as given, else a file path."""
    return text if is_url(text) else Path(text)


def _db_argument(parser: argparse.ArgumentParser) -> None:
    """``--incident-db PATH``, spelled as ``packctl serve`` spells it (``--db`` is the
    deprecated, hidden alias)."""
    parser.add_argument(
        "--incident-db",
        "--db",
        dest="incident_db",
        metavar="PATH|URL",
        type=_store_arg,
        default=None,
        help=_db_help(),
    )
    _hide_alias(parser, "--db")


def _output_argument(parser: argparse.ArgumentParser) -> None:
    """``--output human|json`` as every other command (``--json`` is the hidden alias)."""
    parser.add_argument(
        "--output",
        choices=("human", "json"),
        default="human",
        help="human-readable text (default) or JSON for programs",
    )
    parser.add_argument(
        "--json", dest="output", action="store_const", const="json", help=argparse.SUPPRESS
    )


def _hide_alias(parser: argparse.ArgumentParser, alias: str) -> None:
    """Keep ``alias`` working but out of ``--help`` and usage (a deprecated spelling)."""
    action = parser._option_string_actions[alias]
    action.option_strings = [s for s in action.option_strings if s != alias]


def run_incident(args: argparse.Namespace) -> int:
    """``packctl incident REF``: print one incident; exit 1 when unknown, 2 when the store
    cannot be read (and the journals beside it do not have the id either)."""
    try:
        store = IncidentStore(args.incident_db, read_only=True)
        print(show_incident(store, args.ref, as_json=args.output == "json"))
    except IncidentNotFound as exc:
        print(f"packctl incident: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # IncidentStoreUnreadable, or psycopg missing for a URL
        print(f"packctl incident: {exc}", file=sys.stderr)
        return 2
    return 0


def run_errors(args: argparse.Namespace) -> int:
    """``packctl errors``: print error counts grouped by code, pack or origin; exit 2 when
    the store cannot be read."""
    try:
        store = IncidentStore(args.incident_db, read_only=True)
        print(aggregate_errors(store, args.since, args.by, as_json=args.output == "json"))
    except OSError as exc:  # IncidentStoreUnreadable, or psycopg missing for a URL
        print(f"packctl errors: {exc}", file=sys.stderr)
        return 2
    return 0


def _duration_arg(text: str) -> float | None:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@hookimpl
def add_commands(subparsers: Any) -> None:
    """Add ``incident`` and ``errors`` to an argparse ``add_subparsers()`` object.

    Each sets ``func`` to a handler ``(args) -> exit status``.
    """
    incident = subparsers.add_parser(
        "incident",
        help="show the full story behind an internal_error reference id",
        description="Show one incident: pack, request id, kind, summary and the scrubbed "
        "exception chain with its traceback.",
    )
    incident.add_argument("ref", metavar="REF", help="reference id, e.g. ref_3f9c0a61d2b84e07")
    _output_argument(incident)
    _db_argument(incident)
    incident.set_defaults(func=run_incident)

    errors = subparsers.add_parser(
        "errors",
        help="count recent errors by code, pack or origin",
        description="Count the error events kept in the incident store.",
    )
    errors.add_argument(
        "--since",
        type=_duration_arg,
        default=3600.0,
        metavar="DURATION",
        help="window: 30s, 15m, 1h, 7d or all (default: 1h)",
    )
    errors.add_argument(
        "--by", choices=("code", "pack", "origin"), default="code", help="group by (default: code)"
    )
    _output_argument(errors)
    _db_argument(errors)
    errors.set_defaults(func=run_errors)


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """``packctl serve`` options for metrics, events and the incident store."""
    group = parser.add_argument_group("observability")
    group.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        metavar="PORT",
        help="serve Prometheus metrics on this port (0 picks one; default: off)",
    )
    group.add_argument(
        "--metrics-host",
        default="127.0.0.1",
        metavar="HOST",
        help="address of the metrics endpoint (default: 127.0.0.1)",
    )
    group.add_argument(
        "--events-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="append error events (JSON lines) to PATH instead of stderr",
    )
    group.add_argument(
        "--no-event-stream", action="store_true", help="write error events to no stream"
    )
    group.add_argument(
        "--incident-db",
        type=_store_arg,
        default=None,
        metavar="PATH|URL",
        help=_db_help(),
    )
    group.add_argument(
        "--no-incident-db", action="store_true", help="keep incidents in memory only"
    )
    group.add_argument(
        "--incident-retention",
        type=_duration_arg,
        default=30 * 86400.0,
        metavar="DURATION",
        help="delete incidents and events older than this (default: 30d)",
    )
    group.add_argument(
        "--incident-max-rows",
        type=int,
        default=100_000,
        metavar="N",
        help="keep at most N incidents and N events (default: 100000)",
    )


def observability_config(args: argparse.Namespace) -> ObservabilityConfig:
    """The :func:`add_serve_arguments` options as a typed config."""
    return ObservabilityConfig(
        metrics_port=args.metrics_port,
        metrics_host=args.metrics_host,
        events_file=args.events_file,
        event_stream=not args.no_event_stream,
        incident_store=not args.no_incident_db,
        incident_db=args.incident_db,
        incident_retention=args.incident_retention,
        incident_max_rows=args.incident_max_rows,
    )


@hookimpl
def add_serve_options(parser: argparse.ArgumentParser) -> None:
    """``packctl serve``'s metrics, events, incident store and tracing options."""
    add_serve_arguments(parser)
    group = parser.add_argument_group("tracing (OpenTelemetry, needs the otel extra)")
    group.add_argument(
        "--otel-endpoint",
        default=None,
        metavar="URL",
        help="export one span per call over OTLP to URL, e.g. http://127.0.0.1:4318 "
        "(http/protobuf) or http://127.0.0.1:4317 (grpc); default: off",
    )
    group.add_argument(
        "--otel-protocol",
        choices=PROTOCOLS,
        default="http/protobuf",
        help="OTLP transport (default: http/protobuf)",
    )


@hookimpl
def configure(runtime: Runtime, options: argparse.Namespace) -> None:
    """Observe ``runtime`` as the options of :func:`add_serve_arguments` say, and trace
    what it serves as ``--otel-endpoint`` says (a command without them, e.g. ``--local``,
    is left alone)."""
    if hasattr(options, "metrics_port"):
        runtime.observe(observability_config(options))
    runtime.tracing = tracing_from_args(options)


def tracing_from_args(args: argparse.Namespace) -> Tracing | None:
    """The :class:`Tracing` ``--otel-endpoint`` asks for (global provider), or ``None``."""
    url = getattr(args, "otel_endpoint", None)
    if not url:
        return None
    return Tracing.to_endpoint(url, args.otel_protocol, set_global=True)
