"""Experiment (issue 20, item 3): the control plane on the synchronous ``grpc.server``.

``python -m bench.sync_serve --port N --db PATH [--mode loop|inline]``

The same invoker, observability (events to stderr, the incident store, metrics) and wire
mapping as ``packctl serve --plugin bench.packs``; only the transport differs:

* ``loop``: ``grpc.server`` with 16 threads; each call's ``Invoker.invoke`` coroutine runs on
  one dedicated event-loop thread (``run_coroutine_threadsafe``), the grpc thread waits for
  it, then builds the reply or the rich status itself. Deadlines (``time_remaining``),
  cancellation (``add_callback`` cancels the coroutine), drain (``stop(grace)``) carry over.
* ``inline``: each grpc thread runs the coroutine on an event loop of its own
  (``run_until_complete``): no cross-thread hand-off, but an async pack that awaits holds a
  grpc thread for its whole duration (16 slow async calls starve the server), so this is a
  ceiling, not a candidate.

Measured by ``python -m bench.sync_compare`` against ``packctl serve`` in the same rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import orjson

from control_plane._features.cli.cli import build_parser
from control_plane._features.cli.reliability_cli import runtime_config
from control_plane._features.grpc import status as wire
from control_plane._features.grpc.server import SERVICE_NAME, configure_logging, deadline_budget
from control_plane._features.observability.events import (
    correlation_from_metadata,
    correlation_scope,
)
from control_plane._features.observability.observability_cli import observability_config
from control_plane._kernel.errors import RequestRejected
from control_plane._runtime.runtime import build_runtime
from control_plane.v1 import control_plane_pb2 as pb

THREADS = 16


def build(port: int, db: str, mode: str) -> grpc.Server:
    args = build_parser().parse_args(
        ["serve", "--plugin", "bench.packs", "--incident-db", db, "--address", f"127.0.0.1:{port}"]
    )
    configure_logging(args.log_format, args.log_level)
    runtime = build_runtime(runtime_config(args))
    obs = runtime.observe(observability_config(args))
    invoker = runtime.invoker
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    local = threading.local()

    def run(coro: Any, context: grpc.ServicerContext) -> Any:
        if mode == "inline":
            own = getattr(local, "loop", None)
            if own is None:
                own = local.loop = asyncio.new_event_loop()
            return own.run_until_complete(coro)
        fut = asyncio.run_coroutine_threadsafe(coro, loop)
        context.add_callback(fut.cancel)
        return fut.result()

    def invoke(raw: bytes, context: grpc.ServicerContext) -> bytes:
        request = pb.InvokePackRequest.FromString(raw)
        correlation = correlation_from_metadata(context.invocation_metadata())
        coro = invoker.invoke(
            request.pack,
            request.input or b"{}",
            strict=request.strict,
            fail_on="warn" if request.fail_on == pb.FAIL_ON_WARN else "fail",
            request_id=request.request_id or None,
            timeout=deadline_budget(context.time_remaining()),
        )
        try:
            if correlation:
                with correlation_scope(correlation):
                    outcome = run(coro, context)
            else:
                outcome = run(coro, context)
        except RequestRejected as exc:
            obs.emit_rejection(exc, request_id=request.request_id or None)
            context.abort_with_status(wire.refusal(exc, request.request_id))
            raise AssertionError("unreachable") from None
        if outcome.error is None:
            response = pb.InvokePackResponse(
                result=orjson.dumps(outcome.result),
                pack=outcome.pack,
                pack_version=outcome.version,
                request_id=outcome.request_id,
            )
            if outcome.validation is not None:
                response.validation.CopyFrom(wire.validation_to_proto(outcome.validation))
            return response.SerializeToString()  # type: ignore[no-any-return]
        context.abort_with_status(wire.encode_failure(outcome).status)
        raise AssertionError("unreachable")

    server = grpc.server(ThreadPoolExecutor(THREADS))
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                SERVICE_NAME, {"InvokePack": grpc.unary_unary_rpc_method_handler(invoke)}
            ),
        )
    )
    server.add_insecure_port(f"127.0.0.1:{port}")
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--mode", choices=("loop", "inline"), default="loop")
    args = parser.parse_args()
    server = build(args.port, args.db, args.mode)
    server.start()
    server.wait_for_termination()


if __name__ == "__main__":
    main()
