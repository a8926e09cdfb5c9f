"""``python -m bench.redact``: the scrubber's worst case per KB, before and after, and the
event-loop stall a caller alone can cause through validation messages.

1. **µs per KB** on every adversarial input of :mod:`bench.adversarial` (the four stall
   inputs of issue 16, and inputs built for every rule): main's scrubber as of f96328e
   (:mod:`bench.redact_before`, frozen) at growing sizes until one call passes
   ``--before-cap`` seconds, and the current one at 64 KiB (its bound) and, unbounded, at
   1 MiB. The figure is the worst over the inputs, in CPU time (``time.thread_time``).
2. **Caller-only stall**: a real control plane (``create_server`` with the built-in packs,
   in this process, on this event loop) and a client in another thread calling
   ``InvokePack`` on ``http.fetch`` with a ~1 MB adversarial ``url``; validation messages
   quote it. A heartbeat task measures the longest time the event loop was blocked. The
   "before" run swaps in main's ``_describe`` and scrubber and uses the largest input it
   can finish (1 MB would take hours), as reported.

Writes ``bench/results/redact.json`` (or ``--out``) and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

from bench import redact_before
from bench.adversarial import ADVERSARIAL, STALLS
from control_plane._features.grpc.server import create_server
from control_plane._kernel import redact, schema
from control_plane._runtime.runtime import RuntimeConfig, build_runtime
from control_plane.v1 import control_plane_pb2 as pb
from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

KB = 1024


def _time(fn: Callable[[], object], repeat: int = 3) -> float:
    """Best CPU time of this thread over ``repeat`` runs: on a shared machine, wall time
    counts the other processes too; the scrubber's cost is its CPU time."""
    best = float("inf")
    for _ in range(repeat):
        started = time.thread_time()
        fn()
        best = min(best, time.thread_time() - started)
    return best


def per_kb_before(cap: float) -> dict[str, dict[str, float]]:
    """main's scrubber: µs per KB at the largest size finished under ``cap`` seconds."""
    out: dict[str, dict[str, float]] = {}
    for name, build in ADVERSARIAL.items():
        size = KB
        while True:
            text = build(size)
            took = _time(lambda t=text: redact_before.scrub(t), 1)
            out[name] = {"size": len(text), "us_per_kb": took * 1e6 / (len(text) / KB)}
            if took > cap or size >= 64 * KB:
                break
            size *= 2
    return out


def per_kb_after(size: int, unbounded: bool) -> dict[str, dict[str, float]]:
    work = redact._scrub if unbounded else redact.scrub
    out: dict[str, dict[str, float]] = {}
    for name, build in ADVERSARIAL.items():
        text = build(size)
        took = _time(lambda t=text: work(t), 3)
        out[name] = {"size": len(text), "us_per_kb": took * 1e6 / (len(text) / KB)}
    return out


def _worst(rows: dict[str, dict[str, float]]) -> tuple[str, float]:
    name = max(rows, key=lambda n: rows[n]["us_per_kb"])
    return name, rows[name]["us_per_kb"]


# -- the stall ---------------------------------------------------------------------------


def _main_describe(error: Any) -> str:
    """main's ``schema._describe``: the whole message scrubbed, then cut."""
    text = redact_before.scrub(str(error.message))
    return text if len(text) <= 200 else text[:200] + "..."


async def _stall(url: str) -> dict[str, Any]:
    """The longest event-loop block while the server answers one InvokePack quoting
    ``url`` in its validation messages."""
    runtime = build_runtime(RuntimeConfig(entry_points=False))
    server, port = create_server("127.0.0.1:0", runtime)
    await server.start()
    gaps: list[float] = []
    stop = asyncio.Event()

    async def heartbeat() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last - 0.001)
            last = now

    reply: dict[str, Any] = {}

    def call() -> None:
        with grpc.insecure_channel(
            f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 8 * 1024 * 1024)]
        ) as channel:
            stub = pb_grpc.ControlPlaneServiceStub(channel)
            payload = json.dumps({"url": url}).encode()
            started = time.perf_counter()
            try:
                stub.InvokePack(pb.InvokePackRequest(pack="http.fetch", input=payload), timeout=600)
                reply["status"] = "OK"
            except grpc.RpcError as exc:
                reply["status"] = exc.code().name
                reply["message"] = exc.details()[:200]
            reply["seconds"] = time.perf_counter() - started

    beat = asyncio.create_task(heartbeat())
    await asyncio.sleep(0.05)
    gaps.clear()
    await asyncio.to_thread(call)
    stop.set()
    await beat
    await server.stop(0)
    runtime.close()
    return {
        "input_bytes": len(url),
        "max_block_ms": max(gaps, default=0.0) * 1e3,
        "call_s": reply.get("seconds"),
        "status": reply.get("status"),
        "message": reply.get("message"),
    }


def stall(size: int, before: bool) -> dict[str, dict[str, Any]]:
    saved = schema._describe
    if before:
        schema._describe = _main_describe
    try:
        rows = {name: asyncio.run(_stall(build(size))) for name, build in STALLS.items()}
        # The noise floor: the same call with a 1-character url (same path, nothing to quote).
        rows["baseline_1_char"] = asyncio.run(_stall("x"))
        return rows
    finally:
        schema._describe = saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.redact", description=__doc__)
    parser.add_argument("--before-cap", type=float, default=1.0, help="seconds per call")
    parser.add_argument("--before-stall-size", type=int, default=4 * KB)
    parser.add_argument("--stall-size", type=int, default=1024 * KB)
    parser.add_argument("--quick", action="store_true", help="after only, small sizes")
    parser.add_argument(
        "--skip-before", action="store_true", help="only the current scrubber (full sizes)"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args(argv)

    results: dict[str, Any] = {}
    args.out.mkdir(parents=True, exist_ok=True)

    def save() -> None:  # after each part: a long run keeps what it measured
        (args.out / "redact.json").write_text(json.dumps(results, indent=1, sort_keys=True))

    after_bounded = per_kb_after(16 * KB if args.quick else 64 * KB, unbounded=False)
    results["after_64k"] = after_bounded
    save()
    if not args.quick:
        results["after_unbounded_1m"] = per_kb_after(1024 * KB, unbounded=True)
        save()
        if not args.skip_before:
            results["before"] = per_kb_before(args.before_cap)
            save()
    results["stall_after"] = stall(64 * KB if args.quick else args.stall_size, before=False)
    save()
    if not (args.quick or args.skip_before):
        results["stall_before"] = stall(args.before_stall_size, before=True)

    lines = ["| measure | worst input | figure |", "|---|---|---|"]
    for key, label in (
        ("before", "main's scrubber, µs/KB (largest size under the cap)"),
        ("after_64k", "scrub(), µs/KB at 64 KiB (its bound)"),
        ("after_unbounded_1m", "rules unbounded, µs/KB at 1 MiB"),
    ):
        if key in results:
            name, value = _worst(results[key])
            size = results[key][name]["size"]
            lines.append(f"| {label} | {name} ({size} chars) | {value:,.1f} |")
    for key, label in (("stall_before", "main"), ("stall_after", "now")):
        if key in results:
            rows = results[key]
            name = max(
                (n for n in rows if not n.startswith("baseline")),
                key=lambda n: rows[n]["max_block_ms"],
            )
            row = rows[name]
            lines.append(
                f"| event-loop block, InvokePack http.fetch ({label}) | {name} "
                f"({row['input_bytes']} bytes, {row['status']}) | {row['max_block_ms']:,.1f} ms |"
            )
            floor = rows["baseline_1_char"]["max_block_ms"]
            lines.append(
                f"| same call, 1-character url ({label}): noise floor | | {floor:,.1f} ms |"
            )
    table = "\n".join(lines)
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "redact.json").write_text(json.dumps(results, indent=1, sort_keys=True))
    (args.out / "redact.md").write_text(table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
