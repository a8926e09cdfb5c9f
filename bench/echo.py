"""The baseline: a bare ``grpc.aio`` server that answers with canned bytes.

``python -m bench.echo --port N --spec FILE`` serves ``/bench.Echo/<scenario>`` for each
scenario in the JSON spec file. A scenario either answers OK with fixed response bytes
(``{"kind": "ok", "reply": HEX}``) or ends the call with the same status, message and
trailing metadata the control plane sent (``{"kind": "abort", "code": NAME, "details":
TEXT, "trailers": [[KEY, HEX | TEXT, is_binary]]}``): the echo carries the same bytes both
ways and does no other work. Request bytes are received raw and ignored.

``--work-us N`` makes every call first spend N microseconds of its thread's CPU in Python
(:mod:`bench.budget`: what a given amount of per-call work costs in throughput).

``--sync`` serves the same on the synchronous ``grpc.server`` (a pool of ``--threads``
threads, 16 by default) instead of ``grpc.aio``: the ceiling of Python gRPC is not the aio
server's.

``--loop uvloop`` runs the aio server on uvloop, the control plane's default loop: the
baseline the issue names is the standard loop's echo; this one shows what the loop alone is
worth to a bare server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc

__all__ = ["SERVICE", "main", "method_for"]

SERVICE = "bench.Echo"


def method_for(scenario: str) -> str:
    """The full method name the echo server answers for ``scenario``."""
    return f"/{SERVICE}/{scenario}"


def _abort_parts(spec: dict[str, Any]) -> tuple[grpc.StatusCode, str, tuple[tuple[str, Any], ...]]:
    """Status code, message and trailing metadata of an ``abort`` scenario."""
    trailers = tuple(
        (key, bytes.fromhex(value) if binary else value) for key, value, binary in spec["trailers"]
    )
    return grpc.StatusCode[spec["code"]], spec["details"], trailers


def spin(microseconds: float) -> None:
    """Spend ``microseconds`` of this thread's CPU time in Python bytecode."""
    end = time.thread_time() + microseconds / 1e6
    total = 0
    while time.thread_time() < end:
        for i in range(16):
            total += i


def _handler(
    spec: dict[str, Any], work_us: float = 0.0
) -> Callable[[bytes, Any], Awaitable[bytes]]:
    if spec["kind"] == "ok":
        reply = bytes.fromhex(spec["reply"])
        if work_us > 0:

            async def busy(request: bytes, context: Any) -> bytes:
                spin(work_us)
                return reply

            return busy

        async def ok(request: bytes, context: Any) -> bytes:
            return reply

        return ok
    code, details, trailers = _abort_parts(spec)

    async def abort(request: bytes, context: Any) -> bytes:
        await context.abort(code, details, trailing_metadata=trailers)
        raise AssertionError("unreachable")

    return abort


def _sync_handler(spec: dict[str, Any]) -> Callable[[bytes, Any], bytes]:
    if spec["kind"] == "ok":
        reply = bytes.fromhex(spec["reply"])

        def ok(request: bytes, context: Any) -> bytes:
            return reply

        return ok
    code, details, trailers = _abort_parts(spec)

    def abort(request: bytes, context: Any) -> bytes:
        context.set_trailing_metadata(trailers)
        context.abort(code, details)
        raise AssertionError("unreachable")

    return abort


def serve_sync(port: int, specs: dict[str, dict[str, Any]], threads: int = 16) -> None:
    """Serve ``specs`` on the synchronous ``grpc.server`` until killed."""
    from concurrent.futures import ThreadPoolExecutor

    handlers = {
        name: grpc.unary_unary_rpc_method_handler(_sync_handler(spec))
        for name, spec in specs.items()
    }
    server = grpc.server(ThreadPoolExecutor(threads))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    server.wait_for_termination()


async def serve(port: int, specs: dict[str, dict[str, Any]], work_us: float = 0.0) -> None:
    """Serve every scenario of ``specs`` on 127.0.0.1:``port`` until killed."""
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(_handler(spec, work_us))
        for name, spec in specs.items()
    }
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


def main() -> None:
    parser = argparse.ArgumentParser(description="bare grpc.aio echo server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--spec", type=Path, required=True)
    parser.add_argument("--sync", action="store_true", help="the synchronous grpc.server")
    parser.add_argument("--threads", type=int, default=16, help="threads of --sync")
    parser.add_argument(
        "--work-us", type=float, default=0.0, help="CPU microseconds of Python per OK call"
    )
    parser.add_argument(
        "--loop",
        choices=("asyncio", "uvloop"),
        default="asyncio",
        help="event loop of the grpc.aio server (default: the standard library's)",
    )
    args = parser.parse_args()
    specs = json.loads(args.spec.read_text())
    if args.sync:
        serve_sync(args.port, specs, args.threads)
    else:
        # Bare on purpose: no control_plane import, uvloop's factory straight.
        factory = None
        if args.loop == "uvloop":
            import uvloop

            factory = uvloop.new_event_loop
        with asyncio.Runner(loop_factory=factory) as runner:
            runner.run(serve(args.port, specs, args.work_us))


if __name__ == "__main__":
    main()
