"""The server's own Python cost per call, without the transport: ``python -m bench.micro``.

Builds the stack ``packctl serve`` builds (``build_runtime``, metrics, error events on stderr, the
incident store in a temporary directory, JSON call logs), then calls
``ControlPlaneServicer.InvokePack`` directly with a minimal servicer context, one call at a
time, for each scenario: request parsing, enforcement, wire status, logging and
observability, and the reply's bytes as grpc sends them (the response serializer), but no
HTTP/2. ``--large-bytes N`` adds ``large_result``: a sync pack returning a result of N
bytes of JSON (the success path of a large answer). Much less noisy than the end-to-end
figures, so it is the tool for before/after comparisons of hot-path changes; ``--profile``
adds a cProfile summary per scenario.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

from bench import packs
from bench.scenarios import SCENARIOS, Scenario
from control_plane import Context, Pack, Reach, hookimpl
from control_plane._features.grpc.answers import answer_bytes
from control_plane._features.grpc.server import ControlPlaneServicer, configure_logging
from control_plane._features.observability.observability_cli import (
    add_serve_arguments,
    observability_config,
)
from control_plane._runtime.runtime import RuntimeConfig, build_runtime
from control_plane.v1 import control_plane_pb2 as pb

__all__ = ["main"]


class _Context:
    """Just enough of ``grpc.aio.ServicerContext`` for ``InvokePack``."""

    def invocation_metadata(self) -> tuple[Any, ...]:
        return ()

    def time_remaining(self) -> float | None:
        return None

    async def abort_with_status(self, status: grpc.Status) -> None:
        raise grpc.aio.AbortError()

    async def abort(self, code: Any, details: str = "", trailing_metadata: Any = ()) -> None:
        raise grpc.aio.AbortError()


#: The result of ``bench.large`` (``--large-bytes``): built once, returned by every call.
_LARGE: dict[str, str] = {"blob": ""}
_LARGE_SCENARIO = Scenario("large_result", "bench.large", "a large result (sync pack)", None)


def _large(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return _LARGE


@hookimpl
def register_packs(register: Any) -> None:
    """``bench.large``: a sync pack whose result is ``--large-bytes`` of JSON."""
    register(
        Pack(
            "bench.large",
            "1.0.0",
            "Returns a large result.",
            {"type": "object"},
            {
                "type": "object",
                "properties": {
                    "blob": {"type": "string"},
                    "error": {
                        "type": "object",
                        "properties": {
                            "code": {"enum": ["timeout"]},
                            "message": {"type": "string"},
                        },
                    },
                },
            },
            _large,
            reach=Reach(),  # reaches nothing: in-process, as measured
        )
    )


async def _call(servicer: ControlPlaneServicer, raw: bytes, context: Any) -> None:
    """One call, up to the bytes grpc sends for its reply."""
    with contextlib.suppress(grpc.aio.AbortError):
        answer_bytes(await servicer.InvokePack(pb.InvokePackRequest.FromString(raw), context))


async def _run(servicer: ControlPlaneServicer, sc: Scenario, calls: int) -> tuple[float, float]:
    """(process CPU, wall) microseconds per call; CPU counts every thread of the process."""
    raw = sc.request()
    context: Any = _Context()
    for _ in range(min(200, calls)):
        await _call(servicer, raw, context)
    await asyncio.sleep(0.05)  # let background writers drain the warm-up
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(calls):
        await _call(servicer, raw, context)
    if servicer.observability is not None:
        # The writer threads' CPU for these calls counts too: the event stream's delayed
        # lines and the incident store's rows are written before the clock stops.
        servicer.observability.flush()
    return (
        (time.process_time() - c0) / calls * 1e6,
        (time.perf_counter() - t0) / calls * 1e6,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.micro", description=__doc__)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3, help="best of N")
    parser.add_argument("--scenarios", default=",".join(s.key for s in SCENARIOS))
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--profile-sort", default="tottime", help="pstats key (cumulative, ...)")
    parser.add_argument("--profile-top", type=int, default=25, help="rows of the profile")
    parser.add_argument("--serve-args", default="", help="as for `packctl serve`")
    parser.add_argument(
        "--large-bytes", type=int, default=0, help="add large_result: a result of N bytes"
    )
    args = parser.parse_args(argv)
    wanted = args.scenarios.split(",")
    scenarios = list(SCENARIOS)
    if args.large_bytes > 0:
        _LARGE["blob"] = "x" * args.large_bytes
        scenarios.append(_LARGE_SCENARIO)
        wanted.append(_LARGE_SCENARIO.key)
    serve_parser = argparse.ArgumentParser()
    add_serve_arguments(serve_parser)
    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "stderr", "w") as err:
        serve_args = serve_parser.parse_args(
            ["--incident-db", str(Path(tmp) / "incidents.db"), *args.serve_args.split()]
        )
        runtime = build_runtime(
            RuntimeConfig(builtins=False, entry_points=False, extra=(packs, sys.modules[__name__]))
        )
        invoker = runtime.invoker
        saved, sys.stderr = sys.stderr, err
        try:
            configure_logging("json", "info", stream=err)
            obs = runtime.observe(observability_config(serve_args))
            servicer = ControlPlaneServicer(invoker, max_send_bytes=4 << 20, observability=obs)
            results: dict[str, tuple[float, float]] = {}
            profiles: dict[str, str] = {}
            for sc in scenarios:
                if sc.key not in wanted:
                    continue
                results[sc.key] = min(
                    asyncio.run(_run(servicer, sc, args.calls)) for _ in range(args.repeat)
                )
                if args.profile:
                    prof = cProfile.Profile()
                    prof.enable()
                    asyncio.run(_run(servicer, sc, args.calls))
                    prof.disable()
                    out = io.StringIO()
                    pstats.Stats(prof, stream=out).sort_stats(args.profile_sort).print_stats(
                        args.profile_top
                    )
                    profiles[sc.key] = out.getvalue()
        finally:
            runtime.close()  # flushes the last queued event lines to ``err``, not the terminal
            sys.stderr = saved
    print("Python pipeline per call, no transport (best of N): process CPU, wall")
    for key, (cpu, wall) in results.items():
        print(f"{key:<15} {cpu:8.1f} us CPU {wall:8.1f} us wall")
        if key in profiles:
            print(profiles[key])
    return 0


if __name__ == "__main__":
    sys.exit(main())
