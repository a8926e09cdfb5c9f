"""Profile the control plane under load: ``python -m bench.profile [--scenario KEY]``.

Starts ``packctl serve --plugin bench.packs``, attaches ``py-spy record`` (``pip install
py-spy``) to it while the load generator drives one scenario at 16 concurrent calls, and
summarizes the collapsed stacks: the frames where the server's Python time goes, by own
time and by inclusive time (idle frames of the event loop dropped). The summary is printed
and, with ``--out``, written next to the results.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import grpc

from bench.loadgen import measure
from bench.procs import start_control_plane, wait_healthy
from bench.scenarios import SCENARIOS

__all__ = ["main", "summarize"]

INVOKE = "/control_plane.v1.ControlPlaneService/InvokePack"
#: Frames where a thread waits rather than works.
_IDLE = ("EpollSelector.select (", "Condition.wait (", "Queue.get (", "Event.wait (")


def summarize(collapsed: str, top: int = 30) -> str:
    """Own-time and inclusive-time tables from py-spy's collapsed (``raw``) output."""
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in collapsed.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")
        if any(frame.startswith(_IDLE) for frame in frames[-3:]):
            continue
        total += count
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    if not total:
        return "no busy samples\n"
    lines = [f"busy samples: {total}", "", "own time:"]
    lines += [f"{100 * n / total:6.1f}%  {frame}" for frame, n in own.most_common(top)]
    lines += ["", "inclusive time:"]
    lines += [f"{100 * n / total:6.1f}%  {frame}" for frame, n in inclusive.most_common(top)]
    return "\n".join(lines) + "\n"


async def _drive(target: str, payload: bytes, expected: grpc.StatusCode, seconds: float) -> None:
    async with grpc.aio.insecure_channel(target) as channel:
        m = await measure(
            channel,
            INVOKE,
            payload,
            expected=expected,
            concurrency=16,
            duration=seconds,
            warmup=0.5,
        )
        print(f"{m.rps:.0f} req/s under the profiler", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    parser.add_argument("--scenario", default="success", choices=[s.key for s in SCENARIOS])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--serve-args", default="", help="extra `packctl serve` arguments")
    parser.add_argument("--native", action="store_true", help="include native frames")
    parser.add_argument("--out", type=Path, default=None, help="write the summary here")
    args = parser.parse_args(argv)
    pyspy = shutil.which("py-spy")
    if pyspy is None:
        parser.error("py-spy is not installed (pip install py-spy)")
    scenario = next(s for s in SCENARIOS if s.key == args.scenario)
    expected = grpc.StatusCode.OK
    with (
        tempfile.TemporaryDirectory() as tmp,
        start_control_plane(state_dir=Path(tmp), extra_args=args.serve_args.split()) as cp,
    ):
        wait_healthy(cp)
        raw = Path(tmp) / "stacks.txt"
        spy = subprocess.Popen(
            [
                pyspy,
                "record",
                "--pid",
                str(cp.pid),
                "--duration",
                str(int(args.seconds) + 1),
                "--rate",
                str(args.rate),
                "--format",
                "raw",
                "--threads",
                *(["--native"] if args.native else []),
                "--output",
                str(raw),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        if scenario.code is not None:
            expected = _expected_status(scenario.code)
        asyncio.run(_drive(cp.target, scenario.request(), expected, args.seconds))
        _, err = spy.communicate(timeout=60)
        if spy.returncode != 0 or not raw.exists():
            print(err.decode(errors="replace"), file=sys.stderr)
            return 1
        text = f"scenario: {scenario.title}\n" + summarize(raw.read_text(), args.top)
    print(text)
    if args.out is not None:
        args.out.write_text(text)
    return 0


def _expected_status(code: str) -> grpc.StatusCode:
    from control_plane._features.grpc.status import status_for
    from control_plane._kernel.vocabulary import BASELINE

    return status_for(code, BASELINE[code].retryable)


if __name__ == "__main__":
    sys.exit(main())
