#!/usr/bin/env python3
"""What an isolated call costs against an in-process one: ``python -m bench.isolation_cost``.

Two packs with the same synchronous no-op handler and the least reach (``Reach()``: no
files, no egress, no credentials), one in process, one ``--isolate``\\ d (one worker), called
one at a time through ``Invoker.invoke`` on one event loop (no gRPC). Also measured: a
worker's start (pool built until its first answer: a fresh interpreter that confines
itself and imports the pack) and its replacement after it died. Figures on a shared
machine are noisy; the report prints every round and the median.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from control_plane import Pack, Reach  # noqa: E402
from control_plane._features.isolation.isolation import Isolation  # noqa: E402
from control_plane._kernel.invoke import Invoker  # noqa: E402
from control_plane._kernel.registry import Registry  # noqa: E402

IN_PROCESS = "bench.iso_in_process"
ISOLATED = "bench.iso_isolated"
OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
}


def noop(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The handler of both packs (module level: a worker imports it)."""
    if doc.get("die"):
        import os

        os._exit(3)
    return {"n": int(doc.get("n", 0))}


def _invoker() -> Invoker:
    # The handler by its module's own name (run as ``-m``, this module is ``__main__``,
    # which a worker cannot import).
    handler = importlib.import_module("bench.isolation_cost").noop
    registry = Registry()
    for name in (IN_PROCESS, ISOLATED):
        pack = Pack(
            name,
            "1.0.0",
            "Bench.",
            {"type": "object"},
            OUTPUT,
            handler,
            codes={"internal_error": None},
            reach=Reach(),
        )
        registry.register(pack, "bench")
    return Invoker(registry, max_workers=4)


async def _round(invoker: Invoker, pack: str, calls: int) -> float:
    started = time.perf_counter()
    for i in range(calls):
        outcome = await invoker.invoke(pack, b'{"n": %d}' % i)
    elapsed = time.perf_counter() - started
    assert outcome.code is None, (pack, outcome.code)
    return elapsed / calls * 1e6


async def _main(calls: int, rounds: int) -> None:
    invoker = _invoker()
    try:
        started = time.perf_counter()
        invoker.isolation = Isolation.for_registry(invoker.registry, [ISOLATED], workers=1)
        first = await invoker.invoke(ISOLATED, b"{}")
        start_ms = (time.perf_counter() - started) * 1e3
        assert first.code is None, first.code
        died = await invoker.invoke(ISOLATED, b'{"die": true}')
        assert died.code == "internal_error", died.code
        started = time.perf_counter()
        again = await invoker.invoke(ISOLATED, b"{}")
        replace_ms = (time.perf_counter() - started) * 1e3
        assert again.code is None, again.code
        medians = {}
        print(f"Invoker.invoke, {calls} calls x {rounds} rounds (µs/call, noisy)")
        for pack in (IN_PROCESS, ISOLATED):
            await _round(invoker, pack, max(100, calls // 10))  # warm-up
            figures = [await _round(invoker, pack, calls) for _ in range(rounds)]
            medians[pack] = statistics.median(figures)
            text = ", ".join(f"{f:.1f}" for f in figures)
            print(f"  {pack:<22} median {medians[pack]:8.1f}  (rounds: {text})")
        print(f"  isolated / in-process: {medians[ISOLATED] / medians[IN_PROCESS]:.1f}x")
        print(f"  a worker's start to its first answer: {start_ms:.0f} ms")
        print(f"  a dead worker's replacement to its first answer: {replace_ms:.0f} ms")
    finally:
        invoker.close()


def main() -> int:
    root = logging.getLogger("capability_packs")
    root.addHandler(logging.NullHandler())
    root.propagate = False
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(_main(args.calls, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
