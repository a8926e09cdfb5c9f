"""Callers that never read (issue 41 D): the server's RSS while connections with their
HTTP/2 window at 0 ask for large answers. Not a test: figures, to compare two trees
(``tests/test_answer_budget.py`` holds the bound).

```console
$ python -m bench.slow_readers                                  # this tree, default budget
$ python -m bench.slow_readers --serve-args "--answer-budget 48"
$ python -m bench.slow_readers --root /path/to/other/checkout   # e.g. main before the budget
```

It starts ``packctl serve --plugin testpacks`` from ``--root``, opens ``--connections``
raw HTTP/2 connections that announce a window of 0 (``tests/slow_reader.py``), sends
``--calls`` calls of ``test.big`` (``--size`` bytes of JSON each, no deadline) round-robin
over them, samples the server's RSS (``VmRSS`` of ``/proc/PID/status``) every 0.2 s for
``--seconds`` and reads its peak (``VmHWM``), times a small call from a well-behaved
caller, closes the connections and reads the RSS again 4 s later. Prints RSS before / peak
/ at the end / after the caller left, and how each connection ended.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from slow_reader import SlowReader, rss_kib  # noqa: E402

from bench.harness import invoke_request, serve_piped  # noqa: E402

METHOD = "/control_plane.v1.ControlPlaneService/InvokePack"


def _start(root: Path, extra: list[str]) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "tests")])
    env["CAPABILITY_PACKS_PLUGINS"] = "testpacks"
    env["PYTHONUNBUFFERED"] = "1"
    args = ["--address", "127.0.0.1:0", "--plugin", "testpacks", "--no-incident-db", *extra]
    return serve_piped(args, env, root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.slow_readers", description=__doc__)
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree to serve from")
    parser.add_argument("--serve-args", default="", help="extra `packctl serve` options")
    parser.add_argument("--connections", type=int, default=3)
    parser.add_argument("--calls", type=int, default=120)
    parser.add_argument("--size", type=int, default=2_500_000, help="bytes of each answer")
    parser.add_argument("--seconds", type=float, default=8.0, help="sampling time")
    args = parser.parse_args(argv)
    proc, target = _start(args.root.resolve(), shlex.split(args.serve_args))
    mib = lambda: rss_kib(proc.pid) / 1024  # noqa: E731
    try:
        with grpc.insecure_channel(target) as channel:
            call = channel.unary_unary(METHOD)
            small = invoke_request("test.echo", b"{}")
            call(small, timeout=10)
            time.sleep(0.5)
            before = mib()
            host, port = target.rsplit(":", 1)
            readers = [SlowReader(host, int(port)) for _ in range(args.connections)]
            big = invoke_request("test.big", b'{"size": %d}' % args.size)
            for n in range(args.calls):
                readers[n % len(readers)].call("InvokePack", big)
            peak, slowest, refused = before, 0.0, 0
            ended = time.monotonic() + args.seconds
            while time.monotonic() < ended:
                peak = max(peak, mib())
                started = time.perf_counter()
                try:
                    call(small, timeout=10)
                except grpc.RpcError:
                    refused += 1
                slowest = max(slowest, time.perf_counter() - started)
                time.sleep(0.2)
            during = mib()
            hwm = rss_kib(proc.pid, "VmHWM") / 1024
            ends = [
                "closed" if r.goaway or r.eof else f"open ({r.count('open')} calls)"
                for r in readers
            ]
            for reader in readers:
                reader.close()
            time.sleep(4)
            after = mib()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    print(
        f"RSS before {before:.0f} MiB, peak {hwm:.0f} MiB (VmHWM; sampled {peak:.0f}), "
        f"at the end {during:.0f} MiB, 4 s after the caller left {after:.0f} MiB"
    )
    print(f"connections: {', '.join(ends)}")
    print(f"another caller: slowest {slowest * 1000:.0f} ms, refused {refused}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
