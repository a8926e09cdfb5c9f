"""What per-call work costs in throughput here: ``python -m bench.budget``.

The targets of the main benchmark are ratios against the bare ``grpc.aio`` echo. This tool
answers the question behind them: how many microseconds of Python may a server spend per
call and still reach a given ratio, on this machine, with the load generator sharing its
cores? It runs the echo (the success scenario's reply bytes) once as is and once per
``--work-us`` value with that much CPU time spent in Python before each answer (``python
-m bench.echo --work-us N``), interleaved over ``--rounds`` rounds at 16 concurrent calls,
and reports each variant's calls/s as a ratio to the plain echo (paired per round) with
the server CPU per call. The control plane's own figures are in the same units: its server
CPU per call minus the echo's is the work it adds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc

from bench.echo import method_for
from bench.loadgen import measure
from bench.procs import start_echo, tree_cpu_seconds, wait_ready
from bench.scenarios import SCENARIOS

__all__ = ["main"]


def _payload() -> bytes:
    """The success scenario's request (~350 bytes); the echo answers with the same bytes."""
    return next(sc for sc in SCENARIOS if sc.key == "success").request()


async def _window(target: str, seconds: float, concurrency: int) -> tuple[float, int]:
    """Calls per second of the measured window, and every call answered (warm-up included),
    so the server's CPU divides by the calls that really spent it."""
    payload = _payload()
    async with grpc.aio.insecure_channel(target) as channel:
        warm = await measure(
            channel,
            method_for("success"),
            payload,
            expected=grpc.StatusCode.OK,
            concurrency=concurrency,
            duration=0.3,
            warmup=0,
        )
        m = await measure(
            channel,
            method_for("success"),
            payload,
            expected=grpc.StatusCode.OK,
            concurrency=concurrency,
            duration=seconds,
            warmup=0,
        )
    return m.rps, warm.calls + m.calls


def run(work: Sequence[float], rounds: int, seconds: float, concurrency: int) -> dict[str, Any]:
    """Interleaved rounds: the plain echo, then each ``work`` value; figures per variant."""
    reply = _payload().hex()
    specs = {"success": {"kind": "ok", "reply": reply}}
    variants = [0.0, *work]
    rps: dict[float, list[float]] = {w: [] for w in variants}
    cpu: dict[float, list[float]] = {w: [] for w in variants}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            for w in variants:
                server = start_echo(specs, Path(tmp), work_us=w)
                try:
                    wait_ready(server)
                    c0 = tree_cpu_seconds(server.pid)
                    r, calls = asyncio.run(_window(server.target, seconds, concurrency))
                    used = tree_cpu_seconds(server.pid) - c0
                    rps[w].append(r)
                    cpu[w].append(used / max(calls, 1) * 1e6)
                finally:
                    server.stop()
    out: dict[str, Any] = {}
    for w in variants:
        ratios = [a / b for a, b in zip(rps[w], rps[0.0], strict=True) if b > 0]
        out[str(w)] = {
            "work_us": w,
            "rps": statistics.median(rps[w]),
            "ratio": statistics.median(ratios),
            "ratio_min": min(ratios),
            "ratio_max": max(ratios),
            "cpu_us_per_call": statistics.median(cpu[w]),
        }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.budget", description=__doc__)
    parser.add_argument("--work-us", default="25,50,100,200,400", help="comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=2.0, help="seconds per window")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args(argv)
    work = [float(w) for w in args.work_us.split(",") if w.strip()]
    results = run(work, args.rounds, args.duration, args.concurrency)
    print("| Python work per call (µs) | calls/s | ratio to the plain echo | server CPU µs/call |")
    print("|---:|---:|---:|---:|")
    for row in results.values():
        print(
            f"| {row['work_us']:g} | {row['rps']:.0f} | {row['ratio']:.2f} "
            f"[{row['ratio_min']:.2f}-{row['ratio_max']:.2f}] | {row['cpu_us_per_call']:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
