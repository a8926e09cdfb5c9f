"""Availability under a hanging pack: a no-op sync pack's latency while another sync pack
hangs eight calls (issue 15). Not a test: figures, to compare two trees.

```console
$ python -m bench.availability                    # this tree
$ python -m bench.availability --root /path/to/other/checkout   # e.g. main before the fix
```

It starts ``packctl serve --plugin hostilepacks`` (``tests/hostilepacks.py``) from
``--root`` in its default configuration (default thread pool), then

1. **quiet**: ``--calls`` calls to ``hostile.noop`` from ``--concurrency`` client threads,
   each with a ``--deadline`` second deadline;
2. **hung**: eight calls to ``hostile.hang`` that sleep 60 s in their threads, with a 1 s
   deadline (they overrun it: their threads stay busy), then the same no-op load again.

Prints p50/p99/max latency and the calls that failed (a deadline passed or no thread was
free) in both phases, as text and JSON (``--json``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import orjson

from bench.harness import invoke_request, serve_piped

ROOT = Path(__file__).resolve().parent.parent
METHOD = "/control_plane.v1.ControlPlaneService/InvokePack"


def _request(pack: str, doc: dict[str, Any]) -> bytes:
    return invoke_request(pack, orjson.dumps(doc))


def _start(root: Path, tests: Path) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(tests)])
    env["CAPABILITY_PACKS_PLUGINS"] = "hostilepacks"
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("CAPABILITY_PACKS_INCIDENT_DB", "/tmp/bench-availability/incidents.db")
    args = ["--address", "127.0.0.1:0", "--plugin", "hostilepacks", "--log-level", "error"]
    return serve_piped(args, env, root)


def _load(target: str, calls: int, concurrency: int, deadline: float) -> dict[str, Any]:
    channel = grpc.insecure_channel(target)
    stub: Any = channel.unary_unary(METHOD)
    request = _request("hostile.noop", {})
    latencies: list[float] = []
    failed: dict[str, int] = {}
    lock = threading.Lock()
    try:
        stub(request, timeout=deadline)  # warm the channel (not counted when it answers)
    except grpc.RpcError as err:
        failed["warm-up " + err.code().name] = 1

    def one(_: int) -> None:
        started = time.perf_counter()
        try:
            stub(request, timeout=deadline)
        except grpc.RpcError as err:
            with lock:
                name = err.code().name
                failed[name] = failed.get(name, 0) + 1
            return
        with lock:
            latencies.append(time.perf_counter() - started)

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(calls)))
    channel.close()
    ms = sorted(x * 1000 for x in latencies)

    def pct(p: float) -> float | None:
        return round(ms[min(len(ms) - 1, int(p * len(ms)))], 2) if ms else None

    return {
        "ok": len(ms),
        "failed": failed,
        "p50_ms": round(statistics.median(ms), 2) if ms else None,
        "p99_ms": pct(0.99),
        "max_ms": round(ms[-1], 2) if ms else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout to serve from")
    parser.add_argument("--tests", type=Path, default=ROOT / "tests", help="hostilepacks dir")
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--deadline", type=float, default=5.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    proc, target = _start(args.root.resolve(), args.tests.resolve())
    try:
        quiet = _load(target, args.calls, args.concurrency, args.deadline)
        channel = grpc.insecure_channel(target)
        hang: Any = channel.unary_unary(METHOD)
        hung_calls = [
            hang.future(_request("hostile.hang", {"mode": "hang", "seconds": 60}), timeout=1.0)
            for _ in range(8)
        ]
        for call in hung_calls:  # each overran its deadline; its thread still sleeps
            with contextlib.suppress(grpc.RpcError):
                call.result()
        hung = _load(target, args.calls, args.concurrency, args.deadline)
        channel.close()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    report = {"root": str(args.root), "quiet": quiet, "while_8_calls_hang": hung}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"root: {args.root}")
        for name, figures in (("quiet", quiet), ("while 8 calls hang", hung)):
            print(
                f"  {name:20s} ok={figures['ok']:4d} failed={figures['failed']} "
                f"p50={figures['p50_ms']} ms p99={figures['p99_ms']} ms max={figures['max_ms']} ms"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
