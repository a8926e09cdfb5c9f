"""``packctl``: serve packs, list and describe them, call one.

A thin layer over :mod:`control_plane._features.grpc.server` and
:mod:`control_plane._features.grpc.client`::

    packctl serve [--address HOST:PORT]            # built-in packs on 127.0.0.1:50051
    packctl list      [--target HOST:PORT | --local]
    packctl describe NAME [--target HOST:PORT | --local]
    packctl call NAME --input JSON|@file|- [--strict] [--fail-on warn] [--deadline S]

Human output by default, ``--output json`` for programs. Exit codes (stable):

* ``0`` success;
* ``1`` the pack returned an error code (the envelope is printed);
* ``2`` usage or connection problems: bad arguments, unknown pack, invalid input, no
  control plane at the target.

Subcommands register through :func:`command`, so later ones plug in the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import errno
import logging
import math
import os
import re
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

# Before grpc is imported (its core reads this once, then): gRPC's fork handlers run in every
# child forked while the server's threads are inside gRPC, and libuv (uvloop, the default
# loop) spawns subprocesses with fork(): ~1-2 % of those children died of SIGSEGV before
# exec. The control plane never forks without exec (isolation starts each worker as a
# fresh interpreter), so it needs no fork support; an operator's own setting is kept.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

import grpc
import orjson

from control_plane._features.cli.backends import Blocking, LocalBackend, RemoteBackend
from control_plane._features.cli.reliability_cli import (
    add_client_options,
    add_serve_options,
    client_kwargs,
    runtime_config,
    server_options,
)
from control_plane._features.grants.grant_cli import reach_lines, startup_lines
from control_plane._features.grpc import event_loop
from control_plane._features.grpc.client import (
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_TARGET,
    DeadlineExceeded,
    PackCallError,
    PackDescription,
    PackListing,
    TransportError,
    Unauthenticated,
)
from control_plane._kernel.errors import RequestRejected
from control_plane._kernel.hookspecs import hookimpl
from control_plane._kernel.limits import ConfigError
from control_plane._kernel.outcome import CheckRecord, ErrorEnvelope, Outcome, ValidationRecord
from control_plane._kernel.reach import GrantError
from control_plane._kernel.registry import LoadFailure
from control_plane._runtime import stderr_relay
from control_plane._runtime.log_queue import flush_logs
from control_plane._runtime.plugins import BUILTIN_FEATURES, feature_manager
from control_plane._runtime.runtime import Runtime, build_runtime

__all__ = [
    "EXIT_OK",
    "EXIT_PACK_ERROR",
    "EXIT_USAGE",
    "UsageProblem",
    "add_backend_options",
    "add_commands",
    "add_runtime_arguments",
    "build_parser",
    "configure",
    "local_runtime",
    "main",
    "rejection_problem",
    "run_with_backend",
]

EXIT_OK = 0
EXIT_PACK_ERROR = 1
EXIT_USAGE = 2

#: Deadline of ``list`` / ``describe`` against a server, in seconds.
QUERY_DEADLINE = 10.0

Handler = Callable[[argparse.Namespace], int]


class UsageProblem(Exception):
    """A problem the user must fix (exit 2), with an optional machine-readable kind."""

    def __init__(self, message: str, kind: str = "usage", **extra: Any) -> None:
        super().__init__(message)
        self.kind = kind
        self.extra = extra


# -- output ----------------------------------------------------------------------------


def _json(data: Any, stream: TextIO | None = None) -> None:
    out = stream if stream is not None else sys.stdout
    out.write(orjson.dumps(data, option=orjson.OPT_INDENT_2, default=str).decode() + "\n")


def _problem(args: argparse.Namespace, problem: UsageProblem) -> int:
    if getattr(args, "output", "human") == "json":
        _json({"problem": {"kind": problem.kind, "message": str(problem), **problem.extra}})
    else:
        print(f"packctl: {problem}", file=sys.stderr)
        violations = problem.extra.get("violations") or []
        if len(violations) > 1:  # the message names the first; list them all
            for v in violations:
                print(f"  {v['field'] or '/'}: {v['description']}", file=sys.stderr)
    return EXIT_USAGE


def _check_line(check: CheckRecord) -> str:
    line = f"  {check.severity.upper():<4}  {check.id}: {check.message}"
    facts = []
    if check.expected is not None:
        facts.append(f"expected {orjson.dumps(check.expected).decode()}")
    if check.actual is not None:
        facts.append(f"actual {orjson.dumps(check.actual).decode()}")
    if check.location:
        facts.append(f"at {check.location}")
    return line + (f" ({', '.join(facts)})" if facts else "")


def _validation_lines(validation: ValidationRecord) -> list[str]:
    counts = {s: sum(c.severity == s for c in validation.checks) for s in ("pass", "warn", "fail")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    lines = [f"validation: {validation.status.upper()} ({summary or 'no checks'})"]
    lines.extend(_check_line(c) for c in validation.checks)
    return lines


def _print_outcome(outcome: Outcome) -> None:
    print(f"{outcome.pack} {outcome.version}: ok (request {outcome.request_id})")
    if outcome.validation is not None:
        print("\n".join(_validation_lines(outcome.validation)))
    print("result:")
    _json(outcome.result)


def _print_error(outcome: Outcome, env: ErrorEnvelope, *, local: bool = False) -> None:
    kind = "retryable" if env.retryable else "permanent"
    lines = [f"error: {env.code} ({kind}): {env.message}"]
    lines.append(f"  pack:        {outcome.pack} {outcome.version} (request {outcome.request_id})")
    lines.append(f"  origin:      {env.origin}")
    if env.retry_after is not None:
        lines.append(f"  retry after: {env.retry_after:g}s")
    if env.reference_id:
        lines.append(f"  reference:   {_reference_line(env.reference_id, local)}")
    if env.detail:
        lines.append(f"  detail:      {env.detail}")
    if env.recovery_hint:
        lines.append(f"  hint:        {env.recovery_hint}")
    for v in env.violations or ():
        lines.append(f"  violation:   {v.field or '/'}: {v.description}")
    if env.partial_result is not None:
        lines.append("  partial result: " + orjson.dumps(env.partial_result).decode())
    if env.checks:
        lines.append("  failing checks:")
        lines.extend("  " + _check_line(c) for c in env.checks)
    if outcome.validation is not None:
        lines.extend("  " + line for line in _validation_lines(outcome.validation))
    print("\n".join(lines), file=sys.stderr)


def _print_listing(listing: PackListing) -> None:
    if not listing.packs:
        print("no packs loaded")
    rows = [(p.name, p.version, p.summary) for p in listing.packs]
    width = max((len(r[0]) for r in rows), default=0)
    vwidth = max((len(r[1]) for r in rows), default=0)
    for name, version, summary in rows:
        print(f"{name:<{width}}  {version:<{vwidth}}  {summary}")
    for pack in listing.packs:
        if pack is listing.packs[0]:
            print()
        print(f"{pack.name} codes: {', '.join(pack.codes)}")
    _print_failures(listing.failures, sys.stdout)


def _print_failures(failures: Sequence[LoadFailure | str], stream: TextIO) -> None:
    if failures:
        print(f"\n{len(failures)} load failure(s):", file=stream)
        for failure in failures:
            print(f"  {failure}", file=stream)


# -- pack pages (issue 38): a docs/packs/ reference names a file that exists here -------

_PACK_PAGE = re.compile(r"\bdocs/packs/([\w.-]+\.md)\b")


def _pack_pages() -> Path | None:
    """The built-in packs' pages: in the wheel (``control_plane/_docs/packs``, hatch
    ``force-include``), else in a source checkout (``docs/packs``)."""
    package = Path(__file__).resolve().parents[2]  # control_plane/_features/cli/cli.py
    for candidate in (package / "_docs" / "packs", package.parent / "docs" / "packs"):
        if candidate.is_dir():
            return candidate
    return None


def _with_pages(text: str) -> str:
    """``text`` with each ``docs/packs/NAME.md`` that is installed here as its path."""
    pages = _pack_pages()
    if pages is None:
        return text

    def found(match: re.Match[str]) -> str:
        page = pages / match.group(1)
        return str(page) if page.is_file() else match.group(0)

    return _PACK_PAGE.sub(found, text)


# -- end pack pages ---------------------------------------------------------------------


def _print_description(desc: PackDescription) -> None:
    print(f"{desc.name} {desc.version}: {desc.summary}")
    print(f"plugin: {desc.plugin}   validates: {'yes' if desc.validates else 'no'}")
    if desc.docs:
        print()
        print(_with_pages(desc.docs.rstrip()))
    print("\nerror codes:")
    for info in desc.vocabulary.values():
        kind = "retryable" if info.retryable else "permanent"
        origin = "baseline" if info.baseline else "pack"
        print(f"  {info.code}  [{kind}, {origin}, gRPC {info.grpc_status}]")
        print(f"      {info.description}")
        if info.recovery_hint:
            print(f"      hint: {info.recovery_hint}")
        if info.absorbs:
            print(f"      absorbs: {', '.join(info.absorbs)}")
    print("\ninput schema:")
    _json(desc.input_schema)
    print("output schema:")
    _json(desc.output_schema)


# -- backends: a server or the in-process runtime (_features/cli/backends.py) -------------


def local_runtime(args: argparse.Namespace) -> Runtime:
    """The runtime of a ``--local`` command (see :func:`runtime_config`); a bad
    ``--isolate`` is a usage problem. Its incidents go to the local incident store
    (:func:`_keep_incidents`)."""
    try:
        runtime = build_runtime(runtime_config(args))
    except GrantError as exc:
        raise UsageProblem(str(exc), "grants") from None
    except ConfigError as exc:  # isolation, MCP config: each feature's error names its kind
        raise UsageProblem(str(exc), str(getattr(exc, "kind", "config"))) from None
    for name in sorted(runtime.confinement.trusted):  # the operator's choice, said aloud
        print(
            f"packctl: {name} declares no reach and is trusted (--trust): it runs in this "
            "process, unconfined (docs/grants.md)",
            file=sys.stderr,
        )
    _keep_incidents(runtime)
    return runtime


# -- --local incidents (issue 38): every reference id handed out resolves somewhere ------


def _keep_incidents(runtime: Runtime) -> None:
    """Attach the local incident store (the one ``packctl serve`` and ``packctl incident``
    use by default); when it cannot open, say on stderr where the incidents went. No
    event stream: a ``--local`` command's output is its own."""
    from control_plane._features.observability.events import ErrorEvents
    from control_plane._features.observability.incident_store import open_local_store

    store, where = open_local_store()
    if store is None:
        print(f"packctl: {where}", file=sys.stderr)
    runtime.observe(events=ErrorEvents(), store=store)


def _reference_line(reference_id: str, local: bool) -> str:
    if local:
        return f"{reference_id} (`packctl incident {reference_id}` shows its story)"
    return f"{reference_id} (quote it to the operator)"


# -- end --local incidents ----------------------------------------------------------------


def _backend(args: argparse.Namespace) -> Blocking:
    if args.local:
        runtime = local_runtime(args)
        return Blocking(lambda: LocalBackend(runtime))
    if getattr(args, "mcp_config", None):
        raise UsageProblem(
            "--mcp-config applies with --local; a control plane started with "
            "`packctl serve --mcp-config` serves those tools to --target",
            "usage",
        )
    try:
        credentials = client_kwargs(args)
        return Blocking(lambda: RemoteBackend(args.target, **credentials))
    except (ConfigError, UnicodeDecodeError) as exc:
        raise UsageProblem(str(exc), "credentials") from None


_UNREACHABLE = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNKNOWN}
)


def rejection_problem(exc: RequestRejected) -> UsageProblem:
    """A request refused before any pack ran, as the exit-2 problem it is for the user
    (rendered from its :class:`~control_plane._kernel.rejection.Rejection`)."""
    rejection = exc.rejection
    fields: dict[str, Any] = {}
    if rejection.pack:
        fields["pack"] = rejection.pack
    if rejection.violations:
        fields["violations"] = [
            {"field": v.field, "description": v.description} for v in rejection.violations
        ]
    if rejection.retry_after is not None:
        fields["retry_after"] = rejection.retry_after
    return UsageProblem(rejection.message, rejection.reason, **fields)


def run_with_backend(args: argparse.Namespace, body: Callable[[Blocking], int]) -> int:
    try:
        backend = _backend(args)
    except UsageProblem as exc:
        return _problem(args, exc)
    try:
        return body(backend)
    except RequestRejected as exc:
        return _problem(args, rejection_problem(exc))
    except TransportError as exc:
        if isinstance(exc, DeadlineExceeded):
            message = f"no answer: {exc.details}"
        elif isinstance(exc, Unauthenticated):
            message = (
                f"the control plane at {args.target} refused the call's credentials: "
                f"{exc.details} (packctl sends the token of --token-file PATH, else of "
                "$CAPABILITY_PACKS_TOKEN)"
            )
        elif exc.status in _UNREACHABLE:
            hint = " (is `packctl serve` running? or use --local)"
            message = f"cannot reach the control plane at {args.target}: {exc.details}{hint}"
        else:
            message = (
                f"the control plane at {args.target} answered {exc.status.name}: {exc.details}"
            )
        # A refusal the server sent (overloaded, unauthenticated) is named by its reason;
        # no answer at all is a connection problem.
        answered = not isinstance(exc, DeadlineExceeded) and exc.status not in _UNREACHABLE
        extra: dict[str, Any] = {"target": args.target, "status": exc.status.name}
        if exc.retry_after is not None:
            extra["retry_after"] = exc.retry_after
        kind = exc.rejection.reason if answered else "connection"
        return _problem(args, UsageProblem(message, kind, **extra))
    except PackCallError as exc:  # list/describe: only a deadline the server did not meet
        return _problem(
            args,
            UsageProblem(
                f"the control plane at {args.target} did not answer: {exc.message}",
                "connection",
                target=args.target,
            ),
        )
    except UsageProblem as exc:
        return _problem(args, exc)
    finally:
        backend.close()


# -- commands --------------------------------------------------------------------------


def add_backend_options(parser: argparse.ArgumentParser) -> None:
    """``--target HOST:PORT | --local``, ``--plugin`` and the client's credentials options.

    Every command that calls packs takes these; :func:`run_with_backend` reads them.
    """
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--target",
        default=DEFAULT_TARGET,
        metavar="HOST:PORT",
        help=f"control plane to call (default {DEFAULT_TARGET})",
    )
    where.add_argument(
        "--local",
        action="store_true",
        help="run packs in this process, same enforcement, no server",
    )
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="with --local: also load this plugin module or .py file (repeatable)",
    )
    # --mcp-config, --grant...: each feature's (add_runtime_options, from build_parser)
    parser.set_defaults(runtime_options="with --local: ")
    add_client_options(parser)


def add_runtime_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a long-running command that runs packs (``serve``, ``worker``): what
    :func:`~control_plane._features.cli.reliability_cli.runtime_config` reads, and the logs."""
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="extra plugin module or .py file (repeatable)",
    )
    parser.set_defaults(runtime_options="")  # each feature's options (add_runtime_options)
    parser.add_argument(
        "--threads", type=int, default=None, metavar="N", help="threads for sync pack handlers"
    )
    parser.add_argument(
        "--pack-threads",
        type=int,
        default=None,
        metavar="N",
        help="most sync-handler threads one pack may hold, overrunning calls included "
        "(default: half of --threads)",
    )
    parser.add_argument(
        "--default-timeout",
        type=_positive_float,
        default=300.0,
        metavar="S",
        help="deadline of calls that carry none (default 300)",
    )
    parser.add_argument("--log-format", choices=("json", "kv"), default="json")
    parser.add_argument(
        "--log-level", choices=("debug", "info", "warning", "error"), default="info"
    )


def _add_target(parser: argparse.ArgumentParser) -> None:
    add_backend_options(parser)
    parser.add_argument(
        "--output",
        choices=("human", "json"),
        default="human",
        help="human-readable text (default) or JSON for programs",
    )


def _serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from control_plane._features.grpc.server import (
        DEFAULT_ADDRESS,
        DEFAULT_GRACE,
        DEFAULT_MAX_MESSAGE_BYTES,
    )

    p = sub.add_parser(
        "serve",
        help="serve packs over gRPC (built-in packs, no configuration)",
        description="Serve the built-in and installed packs over gRPC until SIGTERM/SIGINT.",
    )
    p.add_argument("--address", default=DEFAULT_ADDRESS, metavar="HOST:PORT")
    add_runtime_arguments(p)
    p.add_argument(
        "--grace",
        type=_positive_float,
        default=DEFAULT_GRACE,
        metavar="S",
        help=f"seconds in-flight calls get to finish on shutdown (default {DEFAULT_GRACE:g})",
    )
    p.add_argument(
        "--max-message-bytes",
        type=int,
        default=DEFAULT_MAX_MESSAGE_BYTES,
        metavar="N",
        help=f"largest request or response (default {DEFAULT_MAX_MESSAGE_BYTES})",
    )
    p.add_argument(
        "--workers",
        type=_workers,
        default=1,
        metavar="N|auto",
        help="server processes sharing the port (default 1; auto: one per core; "
        "docs/cli.md#workers)",
    )
    p.add_argument(
        "--worker-timeout",
        type=_worker_timeout,
        default=None,
        metavar="S",
        help="with --workers: kill and replace a worker whose event loop sent no heartbeat "
        "for S seconds (default 60; at least 1; 0: never; docs/cli.md#workers)",
    )
    p.add_argument(
        "--loop",
        choices=event_loop.LOOPS,
        default="auto",
        help="event loop of the server (default auto: uvloop where installed, else the "
        "standard library's; docs/cli.md#event-loop)",
    )
    # -- fail-fast on load failures (issue 38) --
    p.add_argument(
        "--strict-load",
        action="store_true",
        help="refuse to start (exit 2) when a plugin, pack or MCP server fails to load "
        "(default: serve the rest and report the failures; docs/cli.md#load-failures)",
    )
    add_serve_options(p)
    p.set_defaults(func=_serve)


def _workers(text: str) -> int:
    from control_plane._features.grpc.workers import parse_workers

    try:
        return parse_workers(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _serve(args: argparse.Namespace) -> int:
    from control_plane._features.grpc.server import PackServer, configure_logging, serve
    from control_plane._features.grpc.workers import follow_supervisor, report_ready, worker_index

    try:
        options = server_options(args)
        loop = event_loop.resolve_loop(args.loop)
    except (ConfigError, UnicodeDecodeError) as exc:
        print(f"packctl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    worker = worker_index()
    if args.workers > 1 and worker is None:
        return _serve_workers(args, loop.name)
    if worker is not None and not follow_supervisor(args.grace):
        print(f"packctl: worker {worker}: the supervisor is gone; not serving", file=sys.stderr)
        return 1
    if worker is not None:  # one of several processes on the port
        options = dataclasses.replace(options, reuse_port=True)
    else:  # say it plainly before gRPC tries (its own error is a raw log line)
        from control_plane._features.grpc.workers import probe_port

        try:
            probe_port(args.address)
        except (OSError, ValueError) as exc:
            print(_cannot_listen(args.address, exc), file=sys.stderr)
            return EXIT_USAGE
    configure_logging(args.log_format, args.log_level)
    try:
        runtime = build_runtime(runtime_config(args))
    except ConfigError as exc:  # isolation, MCP config, grants: each a ConfigError
        print(f"packctl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.strict_load and runtime.registry.failures:  # fail fast, before any port opens
        failures = runtime.registry.failures
        runtime.close()
        print(
            f"packctl: not serving: {len(failures)} load failure(s) and --strict-load:",
            file=sys.stderr,
        )
        _print_failures(failures, sys.stderr)
        return EXIT_USAGE
    try:  # each feature installs itself from its options (observability: metrics...)
        configure(runtime, args)
    except ConfigError as exc:  # an incident store that cannot open, a tracing endpoint
        runtime.close()
        print(f"packctl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if runtime.tracing is not None:
        options = dataclasses.replace(options, tracing=runtime.tracing)
    obs = runtime.observability
    metrics_port = obs.metrics.port if obs is not None else None

    def ready(server: PackServer) -> None:
        flush_logs()  # what was logged while starting comes before the banner
        host = args.address.rsplit(":", 1)[0]
        names = ", ".join(server.registry.names()) or "none"
        pools = runtime.invoker.isolation
        isolated = [n for n in server.registry.names() if pools is not None and n in pools]
        notices = startup_lines(
            server.registry.names(), isolated, runtime.reaches, runtime.confinement
        )
        if worker is not None:
            print(
                f"packctl: worker {worker} (pid {os.getpid()}) ready: "
                f"{len(server.registry)} pack(s) on {host}:{server.port} ({loop.name})",
                file=sys.stderr,
                flush=True,
            )
            failures = [str(f) for f in server.registry.failures]
            report_ready(server.port, metrics_port, len(server.registry), failures, notices)
            return
        if metrics_port is not None:
            print(
                f"packctl: metrics on http://{args.metrics_host}:{metrics_port}/metrics",
                file=sys.stderr,
            )
        print(
            f"packctl: serving {len(server.registry)} pack(s) on {host}:{server.port} "
            f"(health and reflection on, event loop {loop.name}): {names}",
            file=sys.stderr,
            flush=True,
        )
        for line in notices:
            print(line, file=sys.stderr)
        _print_failures(server.registry.failures, sys.stderr)
        sys.stderr.flush()

    try:
        event_loop.run(
            serve(
                args.address,
                grace=args.grace,
                ready=ready,
                runtime=runtime,
                options=options,
            ),
            loop,
        )
    except ConfigError as exc:
        print(f"packctl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RuntimeError as exc:
        if "bind" not in str(exc).lower():
            raise
        print(f"packctl: cannot listen on {args.address}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        stuck = runtime.invoker.threads.busy()
        runtime.close()
        stderr_relay.drain(2.0)  # the last lines children printed (an MCP server's, a worker's)
    if worker is None:
        print("packctl: stopped", file=sys.stderr)
    if stuck:
        # Sync handlers still running after the grace period (one ignoring its
        # cancellation, or hung): the interpreter would wait for their threads at exit,
        # forever for a hung one. Everything durable is written (the runtime is closed).
        print(
            f"packctl: {stuck} handler thread(s) still running after the grace period; "
            "exiting without them",
            file=sys.stderr,
            flush=True,
        )
        logging.shutdown()
        sys.stdout.flush()
        os._exit(EXIT_OK)
    return EXIT_OK


def _cannot_listen(address: str, exc: OSError | ValueError) -> str:
    from control_plane._features.grpc.workers import PORT_TAKEN_HINT

    taken = isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE
    return f"packctl: cannot listen on {address}: {exc}" + (f"; {PORT_TAKEN_HINT}" if taken else "")


def _serve_workers(args: argparse.Namespace, loop: str) -> int:
    """``serve --workers N``: the supervisor (see :mod:`control_plane._features.grpc.workers`)."""
    from control_plane._features.grpc.workers import (
        DEFAULT_WORKER_TIMEOUT,
        Supervisor,
        WorkerStartError,
        reserve_port,
    )
    from control_plane._features.observability.observability import metrics_port_error

    try:
        reserved, address = reserve_port(args.address)
    except (OSError, ValueError) as exc:
        print(_cannot_listen(args.address, exc), file=sys.stderr)
        return EXIT_USAGE
    # The worker command line: this one, its last options overriding (argparse keeps the
    # last value): one process each, the resolved port, metrics on a loopback port of
    # their own (the supervisor serves the merged endpoint).
    # -P: "-m" would put the working directory first on each process's import path, and
    # every isolated worker may read its import path: the operator's files (a tokens file)
    # would be readable by a pack confined to nothing. As the console script, it is not.
    argv = [sys.executable, "-P", "-m", "control_plane._features.cli.cli", *args.argv]
    argv += ["--workers", "1", "--address", address]
    if args.metrics_port is not None:
        argv += ["--metrics-port", "0", "--metrics-host", "127.0.0.1"]
    timeout = args.worker_timeout if args.worker_timeout is not None else DEFAULT_WORKER_TIMEOUT
    supervisor = Supervisor(args.workers, argv, grace=args.grace, worker_timeout=timeout)
    stop = threading.Event()
    metrics_port: int | None = None
    if args.metrics_port is not None:  # before any worker starts: a taken port is refused
        try:
            metrics_port = supervisor.serve_metrics(args.metrics_port, args.metrics_host)
        except OSError as exc:
            reserved.close()
            print(
                f"packctl: {metrics_port_error(args.metrics_host, args.metrics_port, exc)}",
                file=sys.stderr,
            )
            return EXIT_USAGE
    try:
        with supervisor.signals(stop):
            try:
                supervisor.start(stop)
            except WorkerStartError as exc:
                print(f"packctl: {exc}", file=sys.stderr)
                return EXIT_USAGE
            if stop.is_set():  # SIGTERM / SIGINT while the workers started: drain what started
                status = supervisor.stop(args.grace)
                print("packctl: stopped", file=sys.stderr)
                return EXIT_OK if status == 0 else 1
            flush_logs()  # what was logged while starting comes before the banner
            if metrics_port is not None:
                print(
                    f"packctl: metrics on http://{args.metrics_host}:{metrics_port}/metrics "
                    "(all workers)",
                    file=sys.stderr,
                )
            pids = ", ".join(str(p) for p in supervisor.pids())
            print(
                f"packctl: serving {supervisor.packs()} pack(s) on {address} "
                f"with {args.workers} workers (pids {pids}), event loop {loop}",
                file=sys.stderr,
            )
            for line in supervisor.notices():  # the grants, as a single server says them
                print(line, file=sys.stderr)
            _print_failures(supervisor.failures(), sys.stderr)
            sys.stderr.flush()
            status = supervisor.run(stop)
    finally:
        reserved.close()
    print("packctl: stopped", file=sys.stderr)
    return EXIT_OK if status == 0 else 1


def _list_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("list", help="list the packs and the plugins that failed to load")
    _add_target(p)
    p.set_defaults(func=_list)


def _list(args: argparse.Namespace) -> int:
    def body(backend: Blocking) -> int:
        listing = backend.list_packs()
        if args.output == "json":
            _json(listing.to_dict())
        else:
            _print_listing(listing)
        # A load failure is listed, and the exit status says so (CI, health scripts).
        return EXIT_PACK_ERROR if listing.failures else EXIT_OK

    return run_with_backend(args, body)


def _describe_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("describe", help="a pack's schemas and error codes")
    p.add_argument("name", help="the pack's dotted name")
    _add_target(p)
    p.set_defaults(func=_describe)


def _describe(args: argparse.Namespace) -> int:
    def body(backend: Blocking) -> int:
        desc = backend.describe(args.name)
        # What the pack may reach is the local runtime's grants: shown with --local (and the
        # server's --grant/--grants options), which build the same grants as serve.
        local = backend.backend
        reaches = local.runtime.reaches if isinstance(local, LocalBackend) else None
        reach = reaches.reach_for(desc.name) if reaches is not None else None
        declared = reaches.declared_data(desc.name) if reaches is not None else None
        if args.output == "json":
            data = desc.to_dict()
            if reach is not None:
                data["reach"] = {"declared": declared, "granted": reach.describe()}
            _json(data)
        else:
            _print_description(desc)
            if reach is not None:
                print("\nreach (declared, then what it may reach with these grants):")
                print("\n".join(reach_lines(reach, declared)))
            else:
                print("\nreach: run describe --local with the server's --grant/--grants")
        return EXIT_OK

    return run_with_backend(args, body)


def _call_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("call", help="invoke a pack")
    p.add_argument("name", help="the pack's dotted name")
    p.add_argument(
        "--input",
        default="{}",
        metavar="JSON|@FILE|-",
        help="the input document: JSON text, @path to a file, or - for stdin (default {})",
    )
    p.add_argument("--strict", action="store_true", help="turn fail findings into artifact_failed")
    p.add_argument(
        "--fail-on",
        choices=("fail", "warn"),
        default="fail",
        help="with --strict: also fail on warnings (warn)",
    )
    p.add_argument(
        "--deadline", type=_positive_float, default=None, metavar="S", help="deadline in seconds"
    )
    _add_target(p)
    p.set_defaults(func=_call)


#: Largest ``--input`` read (the client's message limit): more would be refused anyway,
#: and ``@/dev/zero`` must not be read without end.
MAX_INPUT_BYTES = DEFAULT_MAX_MESSAGE_BYTES


def _bounded(data: bytes, where: str) -> bytes:
    if len(data) > MAX_INPUT_BYTES:
        raise UsageProblem(
            f"the input from {where} is larger than {MAX_INPUT_BYTES} bytes (the largest "
            "message a call may send)",
            "invalid_input",
        )
    return data


def _read_input(spec: str) -> bytes:
    if spec == "-":
        return _bounded(sys.stdin.buffer.read(MAX_INPUT_BYTES + 1), "stdin")
    if spec.startswith("@"):
        path = spec[1:]
        try:
            with open(path, "rb") as fh:
                return _bounded(fh.read(MAX_INPUT_BYTES + 1), path)
        except OSError as exc:
            raise UsageProblem(f"cannot read input file {path}: {exc.strerror}") from None
    return _bounded(spec.encode("utf-8", "surrogateescape"), "--input")


def _call(args: argparse.Namespace) -> int:
    def body(backend: Blocking) -> int:
        payload = _read_input(args.input)
        outcome = backend.invoke(
            args.name, payload, strict=args.strict, fail_on=args.fail_on, deadline=args.deadline
        )
        if args.output == "json":
            _json(outcome.to_dict())
        elif outcome.error is None:
            _print_outcome(outcome)
        else:
            _print_error(outcome, outcome.error, local=args.local)
        return EXIT_OK if outcome.error is None else EXIT_PACK_ERROR

    return run_with_backend(args, body)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be > 0")
    return value


def _worker_timeout(text: str) -> float:
    from control_plane._features.grpc.workers import HEARTBEAT, MIN_WORKER_TIMEOUT

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and (value == 0 or value >= MIN_WORKER_TIMEOUT)):
        raise argparse.ArgumentTypeError(
            f"{text!r}: seconds >= {MIN_WORKER_TIMEOUT:g} (heartbeats come every "
            f"{HEARTBEAT:g} s), or 0 for never"
        )
    return value


# -- entry point -----------------------------------------------------------------------


@hookimpl
def add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``serve``, ``list``, ``describe`` and ``call``."""
    for add in (_serve_parser, _list_parser, _describe_parser, _call_parser):
        add(subparsers)


def configure(runtime: Runtime, args: argparse.Namespace) -> None:
    """Call every feature's ``configure`` hook: each installs itself on ``runtime`` from
    the options it added (the features ``build_parser`` was given)."""
    features = getattr(args, "features", BUILTIN_FEATURES)
    feature_manager(features).hook.configure(runtime=runtime, options=args)


def build_parser(features: Sequence[str] = BUILTIN_FEATURES) -> argparse.ArgumentParser:
    """The ``packctl`` argument parser: the commands of each of ``features`` (plugin
    modules, ``BUILTIN_FEATURES`` by default) through their ``add_commands`` hooks, then
    ``serve``'s options through ``add_serve_options`` and the options of every command
    that builds a runtime through ``add_runtime_options``."""
    parser = argparse.ArgumentParser(
        prog="packctl",
        description="Serve capability packs over gRPC, and list, describe or call them.",
        epilog="exit codes: 0 success, 1 the pack returned an error code, "
        "2 usage or connection problem",
    )
    parser.set_defaults(features=tuple(features))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    hook = feature_manager(features).hook
    hook.add_commands(subparsers=sub)
    serve = sub.choices.get("serve")
    if serve is not None:
        hook.add_serve_options(parser=serve)
    for command in sub.choices.values():
        when = command.get_default("runtime_options")
        if when is not None:
            hook.add_runtime_options(parser=command, when=when)
    return parser


def _command_parser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            found: argparse.ArgumentParser = action.choices[name]
            return found
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``packctl``; returns the exit code."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # the command's own usage, and the option meant when it is a typo
        command = _command_parser(parser, args.command)
        options = [o for a in command._actions for o in a.option_strings]
        near = [
            f"{word} (did you mean {found[0]}?)" if found else word
            for word in extra
            for found in [difflib.get_close_matches(word.split("=")[0], options, n=1)]
        ]
        command.error(f"unrecognized arguments: {' '.join(near)}")
    args.argv = list(argv) if argv is not None else sys.argv[1:]
    handler: Handler = args.func
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _PipeGuard(saved[0]), _PipeGuard(saved[1])
    try:
        code = handler(args)
        for stream in (sys.stdout, sys.stderr):  # now, not at exit where it would cost 120
            stream.flush()
        return code
    except BrokenPipeError:
        # A write past the guard (a stream's raw buffer) into a closed reader: the command
        # had not finished, so its code is unknown; the reader chose to stop reading.
        _silence(sys.__stdout__)
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
    finally:
        sys.stdout, sys.stderr = saved


def _silence(stream: TextIO | None) -> None:
    """Point ``stream``'s file descriptor at ``/dev/null``: what it still holds (and
    Python's flush at exit) goes nowhere instead of failing on a closed pipe."""
    try:
        fd = stream.fileno() if stream is not None else -1
    except (OSError, ValueError):  # not a real file (a test's capture): nothing to redirect
        return
    if fd >= 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


class _PipeGuard:
    """A text stream whose reader may be gone (``packctl call ... | head``): the first
    ``BrokenPipeError`` silences the stream (:func:`_silence`) and later writes are
    dropped, so the command runs to its end and its exit code is the one it returns --
    1 for a failed call, 2 for a usage problem -- never the pipe's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._broken = False

    def write(self, text: str) -> int:
        if not self._broken:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._break()
        return len(text)

    def flush(self) -> None:
        if not self._broken:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._break()

    def _break(self) -> None:
        self._broken = True
        _silence(self._stream)
        with contextlib.suppress(OSError, ValueError):  # a closed or fake stream
            self._stream.flush()  # what the buffer held now goes to /dev/null

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


if __name__ == "__main__":
    sys.exit(main())
