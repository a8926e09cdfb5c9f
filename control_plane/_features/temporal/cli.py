"""``packctl worker`` and ``packctl temporal-call`` (``temporalio`` imported only when one runs)."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from typing import Any

from control_plane._features.cli.cli import (
    EXIT_OK,
    EXIT_PACK_ERROR,
    EXIT_USAGE,
    UsageProblem,
    _json,
    _positive_float,
    _print_error,
    _print_failures,
    _print_outcome,
    _problem,
    _read_input,
    add_runtime_arguments,
    configure,
    rejection_problem,
)
from control_plane._features.cli.reliability_cli import runtime_config
from control_plane._features.observability.observability_cli import add_serve_arguments
from control_plane._kernel.errors import RequestRejected
from control_plane._kernel.hookspecs import hookimpl
from control_plane._kernel.limits import ConfigError
from control_plane._kernel.outcome import Outcome
from control_plane._runtime.runtime import build_runtime

__all__ = ["add_commands"]

_MISSING = "Temporal support is not installed: pip install 'capability-packs[temporal]'"


@hookimpl
def add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``worker`` and ``temporal-call``."""
    w = subparsers.add_parser(
        "worker",
        help="run packs as Temporal activities (same enforcement as serve)",
        description="A Temporal worker serving InvokePackWorkflow and the pack activity "
        "on a task queue, until SIGTERM/SIGINT.",
    )
    _add_temporal(w)
    add_runtime_arguments(w)  # --plugin, --mcp-config, --threads, ...: as `packctl serve`
    w.add_argument(
        "--max-concurrent-activities",
        type=int,
        default=None,
        metavar="N",
        help="pack calls this worker runs at once (Temporal's default if unset)",
    )
    # The old spelling, kept working and hidden (`serve --workers` now counts processes).
    w.add_argument("--workers", dest="threads", type=int, help=argparse.SUPPRESS)
    w.add_argument(
        "--grace",
        type=_positive_float,
        default=10.0,
        metavar="S",
        help="seconds running calls get to finish on shutdown (default 10)",
    )
    add_serve_arguments(w)  # metrics, error events, incident store: as `packctl serve`
    w.set_defaults(func=lambda args: _finish(_worker(args)))

    c = subparsers.add_parser(
        "temporal-call",
        help="invoke a pack durably through Temporal (InvokePackWorkflow)",
        description="Run one pack call as a Temporal workflow; prints and exits as `call`.",
    )
    c.add_argument("name", help="the pack's dotted name")
    _add_temporal(c)
    c.add_argument("--input", default="{}", metavar="JSON|@FILE|-", help="the input document")
    c.add_argument("--strict", action="store_true", help="turn fail findings into artifact_failed")
    c.add_argument("--fail-on", choices=("fail", "warn"), default="fail")
    c.add_argument(
        "--deadline",
        type=_positive_float,
        default=None,
        metavar="S",
        help="deadline of each attempt, in seconds",
    )
    c.add_argument(
        "--attempts",
        type=int,
        default=5,
        metavar="N",
        help="attempts for retryable codes (default 5; 0 = until it succeeds)",
    )
    c.add_argument(
        "--request-id", default=None, help="request id (the workflow id derives from it)"
    )
    c.add_argument("--output", choices=("human", "json"), default="human")
    c.set_defaults(func=lambda args: _finish(_temporal_call(args)))


def _finish(code: int) -> int:
    """Return ``code``; as the ``packctl`` process itself, end it here instead.

    temporalio's Rust threads can abort an interpreter that is finalizing
    (temporalio/sdk-python#300: "PyGILState_Release ... must be current"), turning a
    clean exit into SIGABRT. The process skips finalization once its output is flushed;
    an in-process caller of ``main()`` just gets the code back.
    """
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    entry = getattr(spec, "name", None) == "control_plane._features.cli.cli" or (
        os.path.basename(sys.argv[0]) == "packctl"
    )
    if entry:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _add_temporal(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--temporal", required=True, metavar="HOST:PORT", help="Temporal frontend address"
    )
    parser.add_argument("--task-queue", required=True, metavar="Q", help="Temporal task queue")
    parser.add_argument("--namespace", default="default", metavar="N")


def _worker(args: argparse.Namespace) -> int:
    try:
        from control_plane._features.temporal.worker import run_worker
    except ImportError:
        print(f"packctl: {_MISSING}", file=sys.stderr)
        return EXIT_USAGE
    from control_plane._features.grpc.server import configure_logging

    configure_logging(args.log_format, args.log_level)
    try:
        runtime = build_runtime(runtime_config(args))
    except ConfigError as exc:  # isolation, MCP config, grants: each a ConfigError
        print(f"packctl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:  # each feature installs itself from its options (observability: metrics...)
        configure(runtime, args)
    except ConfigError as exc:
        runtime.close()
        print(f"packctl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    obs = runtime.observability
    load = runtime.load

    def ready(worker: Any) -> None:
        if obs is not None and obs.metrics.port is not None:
            print(
                f"packctl: metrics on http://{args.metrics_host}:{obs.metrics.port}/metrics",
                file=sys.stderr,
            )
        names = ", ".join(load.registry.names()) or "none"
        print(
            f"packctl: worker on task queue {args.task_queue!r} at {args.temporal} "
            f"(namespace {args.namespace}), {len(load.registry)} pack(s): {names}",
            file=sys.stderr,
            flush=True,
        )
        _print_failures(load.registry.failures, sys.stderr)
        sys.stderr.flush()

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await run_worker(
            args.temporal,
            args.task_queue,
            runtime=runtime,
            namespace=args.namespace,
            stop=stop,
            ready=ready,
            max_concurrent_activities=args.max_concurrent_activities,
            grace=args.grace,
        )

    try:
        asyncio.run(main())
    except RuntimeError as exc:  # temporalio reports a failed connect as RuntimeError
        if "connect" not in str(exc).lower():
            raise
        print(f"packctl: cannot reach Temporal at {args.temporal}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        runtime.close()
    print("packctl: worker stopped", file=sys.stderr)
    return EXIT_OK


def _temporal_call(args: argparse.Namespace) -> int:
    try:
        from control_plane._features.grpc.client import PackCallError
        from control_plane._features.temporal.client import TemporalPackClient
        from control_plane._features.temporal.messages import RetrySettings
    except ImportError:
        return _problem(args, UsageProblem(_MISSING, "missing_extra"))

    async def call(payload: bytes) -> Outcome:
        packs = await TemporalPackClient.connect(
            args.temporal,
            args.task_queue,
            namespace=args.namespace,
            retry=RetrySettings(maximum_attempts=args.attempts),
        )
        try:
            return await packs.invoke(
                args.name,
                payload,
                strict=args.strict,
                fail_on=args.fail_on,
                request_id=args.request_id,
                timeout=args.deadline,
            )
        except PackCallError as exc:
            return exc.outcome

    try:
        outcome = asyncio.run(call(_read_input(args.input)))
    except RequestRejected as exc:
        return _problem(args, rejection_problem(exc))
    except UsageProblem as exc:
        return _problem(args, exc)
    except RuntimeError as exc:  # temporalio reports a failed connect as RuntimeError
        if "connect" not in str(exc).lower():
            raise
        message = f"cannot reach Temporal at {args.temporal}: {exc}"
        return _problem(args, UsageProblem(message, "connection", target=args.temporal))
    if args.output == "json":
        _json(outcome.to_dict())
    elif outcome.error is None:
        _print_outcome(outcome)
    else:
        _print_error(outcome, outcome.error)
    return EXIT_OK if outcome.error is None else EXIT_PACK_ERROR
