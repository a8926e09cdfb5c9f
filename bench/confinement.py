#!/usr/bin/env python3
"""What the secure default costs: a pack that declares no reach, called through its confined
worker, against the same no-op declared (in the server's process).

    python3 bench/confinement.py [--seconds 3] [--concurrency 1,8] [--rounds 3] [--out PATH]

One ``packctl serve --plugin bench.confine_packs`` serves both packs
([confine_packs.py](confine_packs.py)): ``confine.declared`` (``reach=Reach()``, in-process)
and ``confine.undeclared`` (no ``reach=``: an isolated worker under an empty grant,
Landlock where the kernel has it, two workers). This process calls each with
:class:`control_plane._features.grpc.client.AsyncClient`, N tasks in a closed loop, rounds
interleaved so background load hits both. The figure is the ratio undeclared / declared
calls per second (and the extra microseconds per call at one task). On a shared machine
read the ratio, not the absolute numbers. ``--out`` writes JSON; without it nothing is
written (a smoke run never replaces a committed result).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import closed_loop, pythonpath, rate_parser, serve_logged, write_record  # noqa: E402

DOC = {"n": 7, "text": "x" * 200}


def start_control_plane(workdir: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    env = pythonpath(ROOT)
    env["CAPABILITY_PACKS_PLUGINS"] = "bench.confine_packs"
    log = workdir / "serve.log"
    proc, target = serve_logged(
        [
            *("--address", "127.0.0.1:0", "--plugin", "bench.confine_packs"),
            *("--log-level", "warning", "--no-incident-db"),
        ],
        env,
        log,
        cwd=workdir,
        ready=lambda text: "confine.undeclared declares no reach" in text,
    )
    return proc, target, log.read_text()


async def run(seconds: float, concurrencies: list[int], rounds: int) -> dict[str, Any]:
    from control_plane._features.grpc.client import AsyncClient

    with tempfile.TemporaryDirectory(prefix="bench-confine-") as tmp:
        proc, target, banner = start_control_plane(Path(tmp))
        try:
            client = AsyncClient(target)

            def caller(pack: str) -> Callable[[], Awaitable[None]]:
                async def call() -> None:
                    outcome = await client.invoke(pack, DOC, timeout=30)
                    assert outcome.error is None and outcome.result == DOC

                return call

            declared, undeclared = caller("confine.declared"), caller("confine.undeclared")
            for call in (declared, undeclared):  # warm both paths
                await closed_loop(call, 2, 0.5)
            figures: dict[str, Any] = {}
            for n in concurrencies:
                declared_rates: list[float] = []
                undeclared_rates: list[float] = []
                for _ in range(rounds):
                    declared_rates.append(await closed_loop(declared, n, seconds))
                    undeclared_rates.append(await closed_loop(undeclared, n, seconds))
                d = statistics.median(declared_rates)
                u = statistics.median(undeclared_rates)
                ratios = [b / a for a, b in zip(declared_rates, undeclared_rates, strict=True)]
                figures[str(n)] = {
                    "declared_calls_per_s": round(d, 1),
                    "undeclared_calls_per_s": round(u, 1),
                    "ratio": round(statistics.median(ratios), 3),
                    "extra_us_per_call": round((1 / u - 1 / d) * 1e6 * n, 1),
                    "declared_rounds": [round(r, 1) for r in declared_rates],
                    "undeclared_rounds": [round(r, 1) for r in undeclared_rates],
                }
            await client.close()
        finally:
            proc.terminate()
            proc.wait(30)
    kernel = next((line for line in banner.splitlines() if "isolated packs" in line), "")
    return {"kernel": kernel.removeprefix("packctl: "), "by_concurrency": figures}


def main(argv: list[str] | None = None) -> int:
    parser = rate_parser(__doc__)
    args = parser.parse_args(argv)
    concurrencies = [int(c) for c in args.concurrency.split(",") if c]
    result = asyncio.run(run(args.seconds, concurrencies, args.rounds))
    write_record(args, "bench/confinement.py", argv, result)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"no-op pack, calls/s, median of rounds ({result['kernel']})")
    print(f"{'tasks':>5}  {'declared':>9}  {'undeclared':>10}  {'ratio':>6}  extra us/call")
    for n, f in result["by_concurrency"].items():
        print(
            f"{n:>5}  {f['declared_calls_per_s']:>9.1f}  {f['undeclared_calls_per_s']:>10.1f}  "
            f"{f['ratio']:>6.3f}  {f['extra_us_per_call']:.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
