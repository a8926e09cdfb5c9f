#!/usr/bin/env python3
"""Quick comparison: InvokePack on a no-op async pack vs a bare grpc.aio echo server.

    python3 bench/quick_compare.py [--seconds 5] [--concurrency 16] [--rounds 3]

Both servers run in their own processes (this script re-executes itself with ``_serve``);
the load generator is this process: one ``grpc.aio`` channel, ``--concurrency`` tasks in
a closed loop, raw bytes in and out (no client-side protobuf work). The echo server
answers every request with the exact bytes the control plane answered the first call
with, so both carry the same bytes both ways. Rounds alternate between the two servers
(so slow drifts in background load hit both); the report gives requests/s, p50/p99
latency, the server's CPU time per call (from /proc), the per-round throughput ratios and
the ratios of the medians, control plane / echo.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ECHO_METHOD = "/bench.Echo/Echo"
INVOKE_METHOD = "/control_plane.v1.ControlPlaneService/InvokePack"


# -- servers (child processes) ---------------------------------------------------------


def _noop_plugin() -> Any:
    from control_plane import Pack, hookimpl

    async def noop(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {}

    schema = {
        "type": "object",
        "properties": {"error": {"type": "object", "properties": {"code": {"enum": ["timeout"]}}}},
    }

    class Plugin:
        @hookimpl
        def register_packs(self, register: Any) -> None:
            register(Pack("bench.noop", "1.0.0", "No-op.", {"type": "object"}, schema, noop))

    return Plugin()


async def _serve_control_plane() -> None:
    from control_plane.plugins import load_registry
    from control_plane.server import create_server

    load = load_registry(builtins=False, entry_points_=False, extra=[("bench", _noop_plugin())])
    server, port = create_server("127.0.0.1:0", load=load)
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()


async def _serve_echo(reply_hex: str) -> None:
    import grpc

    reply = bytes.fromhex(reply_hex)

    async def echo(request: bytes, context: Any) -> bytes:
        return reply

    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()


def _spawn(*args: str) -> tuple[subprocess.Popen[str], int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, __file__, "_serve", *args],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    return proc, port


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


# -- load generator --------------------------------------------------------------------


async def _load(
    port: int, method: str, payload: bytes, seconds: float, concurrency: int
) -> tuple[int, list[float]]:
    import grpc

    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary(method)
        for _ in range(200):  # warm-up
            await call(payload)
        latencies: list[float] = []
        stop_at = time.perf_counter() + seconds

        async def worker() -> None:
            while True:
                t0 = time.perf_counter()
                if t0 >= stop_at:
                    return
                await call(payload)
                latencies.append(time.perf_counter() - t0)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return len(latencies), latencies


def _measure(
    proc: subprocess.Popen[str],
    port: int,
    method: str,
    payload: bytes,
    seconds: float,
    concurrency: int,
) -> dict[str, float]:
    cpu0 = _cpu_seconds(proc.pid)
    t0 = time.perf_counter()
    count, latencies = asyncio.run(_load(port, method, payload, seconds, concurrency))
    wall = time.perf_counter() - t0
    cpu = _cpu_seconds(proc.pid) - cpu0
    latencies.sort()
    return {
        "rps": count / seconds,
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "cpu_us_per_call": cpu / (count + 200) * 1e6,
        "wall": wall,
    }


def _first_reply(port: int, payload: bytes) -> bytes:
    import grpc

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        reply: bytes = channel.unary_unary(INVOKE_METHOD)(payload)
    return reply


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_serve":
        if sys.argv[2] == "cp":
            asyncio.run(_serve_control_plane())
        else:
            asyncio.run(_serve_echo(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from control_plane.v1 import control_plane_pb2 as pb

    payload = pb.InvokePackRequest(pack="bench.noop", input=b"{}").SerializeToString()
    cp, cp_port = _spawn("cp")
    reply = _first_reply(cp_port, payload)
    echo, echo_port = _spawn("echo", reply.hex())
    results: dict[str, list[dict[str, float]]] = {"control_plane": [], "echo": []}
    try:
        for _ in range(args.rounds):
            for name, proc, port, method in (
                ("echo", echo, echo_port, ECHO_METHOD),
                ("control_plane", cp, cp_port, INVOKE_METHOD),
            ):
                results[name].append(
                    _measure(proc, port, method, payload, args.seconds, args.concurrency)
                )
    finally:
        for proc in (cp, echo):
            proc.terminate()
            proc.wait(10)

    def med(name: str, key: str) -> float:
        return statistics.median(r[key] for r in results[name])

    print(
        f"request {len(payload)} B, response {len(reply)} B, concurrency {args.concurrency}, "
        f"{args.rounds} x {args.seconds:g}s per server, {os.cpu_count()} CPUs"
    )
    for name in ("echo", "control_plane"):
        rps = ", ".join(f"{r['rps']:.0f}" for r in results[name])
        print(
            f"{name:>14}: {med(name, 'rps'):8.0f} req/s (rounds: {rps})  "
            f"p50 {med(name, 'p50_ms'):.2f} ms  p99 {med(name, 'p99_ms'):.2f} ms  "
            f"server CPU {med(name, 'cpu_us_per_call'):.0f} us/call"
        )
    pairs = [
        c["rps"] / e["rps"] for c, e in zip(results["control_plane"], results["echo"], strict=True)
    ]
    print(
        f"  per-round throughput ratios: {', '.join(f'{r:.3f}' for r in pairs)} "
        f"(median {statistics.median(pairs):.3f})"
    )
    print(
        f"  ratio of medians: throughput {med('control_plane', 'rps') / med('echo', 'rps'):.3f}x  "
        f"p99 {med('control_plane', 'p99_ms') / med('echo', 'p99_ms'):.3f}x  "
        f"server CPU/call "
        f"{med('control_plane', 'cpu_us_per_call') / med('echo', 'cpu_us_per_call'):.3f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
