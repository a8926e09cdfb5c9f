#!/usr/bin/env python3
"""Calls per second of a wrapped MCP tool: through the control plane vs the MCP SDK directly.

    python3 bench/mcp_source.py [--seconds 3] [--concurrency 1,8] [--rounds 3]

The tool is ``get_current_time`` of the reference ``mcp-server-time`` (PyPI, the ``dev``
extra): the nearest a real server has to a no-op. Two ways to call it, same run, rounds
interleaved so background load hits both:

* ``direct``  -- this process runs the server over stdio with the SDK's ``ClientSession``
  and calls ``tools/call`` (the SDK validates the structured content against the tool's
  output schema, as an agent's client does);
* ``wrapped`` -- a ``packctl serve --mcp-config`` child wraps the same server as the pack
  ``time.get_current_time``; this process calls it with
  :class:`control_plane._features.grpc.client.AsyncClient` over gRPC (input schema check, the MCP
  call, output schema check, vocabulary enforcement, one more process hop).

Each with N tasks in a closed loop. The overhead is ``1 - wrapped/direct``. On a shared
machine the figures are noisy: read the ratio, not the absolute numbers.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import closed_loop, pythonpath, rate_parser, serve_logged, write_record  # noqa: E402

ARGS = {"timezone": "Europe/Paris"}
SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "Etc/UTC"]

CONFIG = """
[servers.time]
command = {command}
args = {args}
prefix = "time"
codes = ["invalid_arguments", "server_unavailable", "timeout"]
"""


def start_control_plane(workdir: Path) -> tuple[subprocess.Popen[bytes], str, Path]:
    config = workdir / "packctl-mcp.toml"
    config.write_text(CONFIG.format(command=json.dumps(SERVER[0]), args=json.dumps(SERVER[1:])))
    log = workdir / "serve.log"
    env = pythonpath(ROOT)
    env["CAPABILITY_PACKS_PLUGINS"] = ""  # only the MCP packs
    args = ["--address", "127.0.0.1:0", "--mcp-config", str(config), "--log-level", "warning"]
    proc, target = serve_logged(args, env, log)
    return proc, target, log


async def run(seconds: float, concurrencies: list[int], rounds: int) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from control_plane._features.grpc.client import AsyncClient

    with tempfile.TemporaryDirectory() as tmp:
        proc, target, _ = start_control_plane(Path(tmp))
        try:
            params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
            async with (
                stdio_client(params, errlog=sys.stderr) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await session.list_tools()
                client = AsyncClient(target)

                async def direct() -> None:
                    result = await session.call_tool("get_current_time", ARGS)
                    assert not result.is_error

                async def wrapped() -> None:
                    outcome = await client.invoke("time.get_current_time", ARGS, timeout=30)
                    assert outcome.error is None

                for call in (direct, wrapped):  # warm both paths
                    await closed_loop(call, 2, 0.5)
                figures: dict[str, Any] = {}
                for n in concurrencies:
                    direct_rates: list[float] = []
                    wrapped_rates: list[float] = []
                    for _ in range(rounds):
                        direct_rates.append(await closed_loop(direct, n, seconds))
                        wrapped_rates.append(await closed_loop(wrapped, n, seconds))
                    d = statistics.median(direct_rates)
                    w = statistics.median(wrapped_rates)
                    figures[str(n)] = {
                        "direct_calls_per_s": round(d, 1),
                        "wrapped_calls_per_s": round(w, 1),
                        "ratio": round(w / d, 3),
                        "overhead": round(1 - w / d, 3),
                        "direct_rounds": [round(r, 1) for r in direct_rates],
                        "wrapped_rounds": [round(r, 1) for r in wrapped_rates],
                    }
                await client.close()
        finally:
            proc.terminate()
            proc.wait(30)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = rate_parser(__doc__)
    args = parser.parse_args(argv)
    concurrencies = [int(c) for c in args.concurrency.split(",") if c]
    figures = asyncio.run(run(args.seconds, concurrencies, args.rounds))
    write_record(args, "bench/mcp_source.py", argv, {"by_concurrency": figures})
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print("mcp-server-time get_current_time: calls/s, median of rounds")
    print(f"{'tasks':>5}  {'direct SDK':>10}  {'wrapped':>10}  {'ratio':>6}  overhead")
    for n, f in figures.items():
        print(
            f"{n:>5}  {f['direct_calls_per_s']:>10.1f}  {f['wrapped_calls_per_s']:>10.1f}  "
            f"{f['ratio']:>6.3f}  {f['overhead'] * 100:.1f}%"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
