#!/usr/bin/env python3
"""The invoke pipeline's own cost per call, in process: ``python3 bench/invoke_cost.py``.

Times ``await Invoker.invoke(...)`` for a no-op pack, one call at a time on one event
loop: input parsing and validation (jsonschema-rs), the handler, classification, output
validation, closed-set enforcement, redaction and the frozen outcome model. No gRPC, no
logging, no listeners. Scenarios:

* ``success/async``: an ``async`` no-op handler returning ``{}``;
* ``success/sync``: the same as a plain function (runs in the Invoker's thread pool);
* ``error/typed``: the handler raises ``not_found()`` (a declared baseline code);
* ``error/classified``: the handler raises ``ConnectionRefusedError`` (classified to
  ``network_error`` through the type table);
* ``error/internal``: the handler raises ``RuntimeError`` (``internal_error``: redacted,
  the incident stored in memory under a reference id).

Each scenario runs ``--rounds`` times after a warm-up; the report prints every round in
µs per call and the median. Figures on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from control_plane import Pack, Reach, errors  # noqa: E402
from control_plane._kernel.invoke import Invoker  # noqa: E402
from control_plane._kernel.registry import Registry  # noqa: E402

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"code": {"enum": ["not_found", "network_error", "timeout"]}},
        }
    },
}


async def _async_noop(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {}


def _sync_noop(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {}


async def _typed(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    raise errors.not_found("no such thing")


async def _classified(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    raise ConnectionRefusedError(111, "Connection refused")


async def _internal(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    raise RuntimeError("something odd, password=hunter2")


SCENARIOS: dict[str, tuple[Callable[..., Any], str | None]] = {
    "success/async": (_async_noop, None),
    "success/sync": (_sync_noop, None),
    "error/typed": (_typed, "not_found"),
    "error/classified": (_classified, "network_error"),
    "error/internal": (_internal, "internal_error"),
}


def _invoker() -> Invoker:
    registry = Registry()
    for name, (handler, _) in SCENARIOS.items():
        pack_name = "bench." + name.replace("/", "_")
        registry.register(
            Pack(
                pack_name,
                "1.0.0",
                "Bench.",
                {"type": "object"},
                OUTPUT_SCHEMA,
                handler,
                reach=Reach(),
            ),
            "bench",
        )
    return Invoker(registry, max_workers=4)


async def _round(invoker: Invoker, pack: str, calls: int, expect: str | None) -> float:
    payload = b"{}"
    started = time.perf_counter()
    for _ in range(calls):
        outcome = await invoker.invoke(pack, payload)
    elapsed = time.perf_counter() - started
    assert outcome.code == expect, (pack, outcome.code)
    return elapsed / calls * 1e6


async def _main(calls: int, rounds: int, only: list[str]) -> None:
    invoker = _invoker()
    try:
        print(f"Invoker.invoke, {calls} calls x {rounds} rounds per scenario (µs/call, noisy)")
        for name, (_, expect) in SCENARIOS.items():
            if only and name not in only:
                continue
            pack = "bench." + name.replace("/", "_")
            await _round(invoker, pack, max(200, calls // 10), expect)  # warm-up
            figures = [await _round(invoker, pack, calls, expect) for _ in range(rounds)]
            rounds_text = ", ".join(f"{f:.1f}" for f in figures)
            print(f"  {name:<17} median {statistics.median(figures):7.1f}  (rounds: {rounds_text})")
    finally:
        invoker.close()


def main() -> int:
    # Measure the pipeline, not a stderr handler: records still get created, never emitted.
    root = logging.getLogger("capability_packs")
    root.addHandler(logging.NullHandler())
    root.propagate = False
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("scenario", nargs="*", choices=[[], *SCENARIOS], default=[])
    args = parser.parse_args()
    asyncio.run(_main(args.calls, args.rounds, args.scenario))
    return 0


if __name__ == "__main__":
    sys.exit(main())
