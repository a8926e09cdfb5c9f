"""What several benchmarks share: starting ``packctl serve`` and waiting for its banner, a
closed loop of calls, a hand-encoded ``InvokePack`` request."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

BANNER = re.compile(r"serving \d+ pack\(s\) on (127\.0\.0\.1:\d+)")
SERVE = (sys.executable, "-m", "control_plane._features.cli.cli", "serve")


def serve_logged(
    args: list[str],
    env: dict[str, str],
    log: Path,
    *,
    cwd: Path | None = None,
    ready: Callable[[str], bool] = lambda text: True,
) -> tuple[subprocess.Popen[bytes], str]:
    """``packctl serve ARGS`` with its stderr in ``log``; its address once the banner is
    there and ``ready(log text)`` holds (``SystemExit`` with the log if it never is)."""
    proc = subprocess.Popen(
        [*SERVE, *args], stdout=subprocess.DEVNULL, stderr=log.open("wb"), env=env, cwd=cwd
    )
    end = time.monotonic() + 60
    while time.monotonic() < end:
        text = log.read_text()
        match = BANNER.search(text)
        if match and ready(text):
            return proc, match.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("packctl serve did not start:\n" + log.read_text())


def serve_piped(
    args: list[str], env: dict[str, str], cwd: Path
) -> tuple[subprocess.Popen[str], str]:
    """``packctl serve ARGS`` in its own session, its stderr read line by line up to the
    banner and drained afterwards; its address (``SystemExit`` if it never starts)."""
    proc = subprocess.Popen(
        [*SERVE, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=env, cwd=cwd, start_new_session=True,
    )  # fmt: skip
    stderr = proc.stderr
    assert stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = stderr.readline()
        match = BANNER.search(line)
        if match:
            threading.Thread(target=lambda: [None for _ in stderr], daemon=True).start()
            return proc, match.group(1)
        if not line:
            break
    proc.kill()
    raise SystemExit("packctl serve did not start")


def invoke_request(pack: str, doc: bytes) -> bytes:
    """InvokePackRequest{pack=1, input=2}, hand-encoded: the same bytes whichever tree runs."""

    def field(number: int, data: bytes) -> bytes:
        size, prefix = len(data), b""
        while True:
            byte = size & 0x7F
            size >>= 7
            prefix += bytes([byte | (0x80 if size else 0)])
            if not size:
                break
        return bytes([(number << 3) | 2]) + prefix + data

    return field(1, pack.encode()) + field(2, doc)


async def closed_loop(
    call: Callable[[], Awaitable[Any]], concurrency: int, seconds: float
) -> float:
    """Calls per second of ``concurrency`` tasks calling back to back for ``seconds``."""
    count = 0
    end = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal count
        while time.perf_counter() < end:
            await call()
            count += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return count / (time.perf_counter() - started)


def pythonpath(*paths: Path) -> dict[str, str]:
    """This environment with ``paths`` in front of its ``PYTHONPATH``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (*map(str, paths), env.get("PYTHONPATH", "")) if p
    )
    return env


def rate_parser(doc: str | None) -> argparse.ArgumentParser:
    """The options of a closed-loop rate comparison: window, concurrencies, rounds, output."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per window (default 3)")
    parser.add_argument("--concurrency", default="1,8", help="comma-separated (default 1,8)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--out", default=None, metavar="PATH", help="also write the figures as JSON to PATH"
    )
    return parser


def write_record(
    args: argparse.Namespace, script: str, argv: list[str] | None, figures: dict[str, Any]
) -> None:
    """With ``--out``, the figures and how they were taken (command, load, CPUs) as JSON."""
    if not args.out:
        return
    record = {
        "command": f"python {script} " + " ".join(argv or sys.argv[1:]),
        "seconds": args.seconds,
        "rounds": args.rounds,
        "loadavg_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
        **figures,
    }
    Path(args.out).write_text(json.dumps(record, indent=2) + "\n")
