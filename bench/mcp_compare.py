#!/usr/bin/env python3
"""Calls per second of a no-op pack: direct gRPC vs through the MCP bridge.

    python3 bench/mcp_compare.py [--seconds 3] [--concurrency 16] [--rounds 3]

A control plane (``packctl serve``) runs the no-op pack ``bench.noop`` in a child process.
Three ways to call it, each sequentially (one call at a time) and with ``--concurrency``
tasks in a closed loop:

* ``grpc``        -- :class:`control_plane._features.grpc.client.AsyncClient` straight to the
control plane;
* ``mcp->grpc``   -- the SDK's stdio client to ``packctl mcp --target`` (a child), which
  calls the same control plane: the bridge's full cost, one extra hop;
* ``mcp-local``   -- the SDK's stdio client to ``packctl mcp --local`` (packs in the
  bridge's process, no gRPC).

The load generator is this process (for MCP it includes the SDK client's own work, e.g.
validating ``structuredContent`` against the tool's output schema). Rounds interleave the
modes so background load hits all of them. On a shared machine the figures are noisy:
read the ratios, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from control_plane import Pack, Reach, hookimpl  # noqa: E402

PACK = "bench.noop"
MODULE = "bench.mcp_compare"


# -- the plugin (this module, imported by the children as ``bench.mcp_compare``) -------


async def _noop(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {}


_SCHEMA = {
    "type": "object",
    "properties": {"error": {"type": "object", "properties": {"code": {"enum": ["timeout"]}}}},
}


@hookimpl
def register_packs(register: Any) -> None:
    register(Pack(PACK, "1.0.0", "No-op.", {"type": "object"}, _SCHEMA, _noop, reach=Reach()))


# -- children --------------------------------------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(ROOT), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env["CAPABILITY_PACKS_PLUGINS"] = MODULE
    return env


def _packctl(*args: str) -> list[str]:
    return [sys.executable, "-m", "control_plane._features.cli.cli", *args]


def start_control_plane() -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen(
        _packctl("serve", "--address", "127.0.0.1:0", "--plugin", MODULE, "--log-level", "error"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert proc.stderr is not None
    for raw in iter(proc.stderr.readline, b""):
        found = re.search(r"on 127\.0\.0\.1:(\d+)", raw.decode())
        if found:
            # Keep draining so the child never blocks on a full stderr pipe.
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, f"127.0.0.1:{found.group(1)}"
    raise RuntimeError("the control plane did not start")


# -- load ------------------------------------------------------------------------------


async def closed_loop(
    call: Callable[[], Awaitable[Any]], seconds: float, concurrency: int
) -> tuple[float, float]:
    """(calls per second, p50 latency ms) of ``concurrency`` tasks for ``seconds``."""
    for _ in range(20):  # warm-up
        await call()
    latencies: list[float] = []
    end = time.perf_counter() + seconds

    async def worker() -> None:
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            await call()
            latencies.append(time.perf_counter() - t0)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    return len(latencies) / elapsed, statistics.median(latencies) * 1000


async def run(args: argparse.Namespace) -> None:
    from mcp import Client, StdioServerParameters

    from control_plane._features.grpc.client import AsyncClient

    server, target = start_control_plane()
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    try:
        grpc_client = AsyncClient(target)

        async def grpc_call() -> None:
            outcome = await grpc_client.invoke(PACK, b"{}")
            assert outcome.ok

        def stdio(*extra: str) -> StdioServerParameters:
            argv = _packctl("mcp", *extra)
            return StdioServerParameters(command=argv[0], args=argv[1:], env=_env())

        async with (
            Client(stdio("--target", target)) as via_grpc,
            Client(stdio("--local", "--plugin", MODULE)) as local,
        ):
            await via_grpc.list_tools()
            await local.list_tools()

            def mcp_call(client: Client) -> Callable[[], Awaitable[None]]:
                async def call() -> None:
                    result = await client.call_tool(PACK, {})
                    assert not result.is_error, result

                return call

            modes = {
                "grpc": grpc_call,
                "mcp->grpc": mcp_call(via_grpc),
                "mcp-local": mcp_call(local),
            }
            for rnd in range(args.rounds):
                for conc in (1, args.concurrency):
                    for mode, call in modes.items():
                        rate, p50 = await closed_loop(call, args.seconds, conc)
                        results.setdefault((mode, conc), []).append((rate, p50))
                        print(
                            f"round {rnd + 1} c={conc:<3} {mode:<10} {rate:8.0f} calls/s  "
                            f"p50 {p50:6.2f} ms",
                            flush=True,
                        )
        await grpc_client.close()
    finally:
        server.terminate()
        server.wait(15)

    print(f"\nmedian of {args.rounds} rounds (noisy, shared machine: {os.cpu_count()} cores)")
    for conc in (1, args.concurrency):
        base = statistics.median(r for r, _ in results[("grpc", conc)])
        for mode in ("grpc", "mcp->grpc", "mcp-local"):
            rates = [r for r, _ in results[(mode, conc)]]
            med = statistics.median(rates)
            p50 = statistics.median(p for _, p in results[(mode, conc)])
            spread = ", ".join(f"{r:.0f}" for r in rates)
            print(
                f"  c={conc:<3} {mode:<10} {med:8.0f} calls/s  p50 {p50:6.2f} ms  "
                f"{med / base:5.2f}x grpc   rounds: {spread}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per mode and round")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
