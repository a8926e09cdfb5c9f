"""Server processes: the control plane (``packctl serve``) and the echo, plus /proc probes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.loadgen import CHANNEL_OPTIONS

__all__ = [
    "ROOT",
    "Server",
    "cpu_seconds",
    "free_port",
    "rss_bytes",
    "start_control_plane",
    "start_echo",
    "start_peer",
    "tree_cpu_seconds",
    "wait_healthy",
]

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (the server binds it right after)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _env(plugins: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["CAPABILITY_PACKS_PLUGINS"] = plugins
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Server:
    """A server subprocess on 127.0.0.1:``port``; its stderr goes to a temporary file."""

    def __init__(self, name: str, argv: Sequence[str], port: int, env: dict[str, str]) -> None:
        self.name = name
        self.port = port
        self._log: IO[bytes] = tempfile.TemporaryFile(prefix=f"bench-{name}-")  # noqa: SIM115
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            list(argv), env=env, stdout=subprocess.DEVNULL, stderr=self._log, cwd=ROOT
        )

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self, limit: int = 2000) -> str:
        self._log.flush()
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-limit:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_control_plane(
    plugin: str = "bench.packs",
    *,
    name: str = "control_plane",
    state_dir: Path,
    extra_args: Sequence[str] = (),
) -> Server:
    """``packctl serve`` loading only ``plugin``, as configured by default.

    JSON logs and error events go to a temporary file (stderr); the incident database
    lives in ``state_dir``. ``extra_args`` are appended to the command line.
    """
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "control_plane._features.cli.cli",
        "serve",
        "--address",
        f"127.0.0.1:{port}",
        "--grace",
        "1",
    ]
    if plugin:
        argv += ["--plugin", plugin]
    argv += ["--incident-db", str(state_dir / f"{name}-{port}.db"), *extra_args]
    return Server(name, argv, port, _env(plugin))


def start_echo(
    specs: dict[str, dict[str, Any]],
    spec_dir: Path,
    *,
    sync: bool = False,
    work_us: float = 0.0,
    loop: str = "asyncio",
) -> Server:
    """The bare ``grpc.aio`` echo server answering ``specs`` (``sync``: ``grpc.server``;
    ``work_us``: CPU microseconds of Python spent per OK call, see :mod:`bench.budget`;
    ``loop``: its event loop, ``asyncio`` or ``uvloop``)."""
    path = spec_dir / "echo-spec.json"
    path.write_text(json.dumps(specs))
    port = free_port()
    argv = [sys.executable, "-m", "bench.echo", "--port", str(port), "--spec", str(path)]
    if sync:
        argv.append("--sync")
    if work_us:
        argv += ["--work-us", str(work_us)]
    if loop != "asyncio":
        argv += ["--loop", loop]
    name = "sync_echo" if sync else "echo" if loop == "asyncio" else f"{loop}_echo"
    return Server(name, argv, port, _env(""))


def start_peer(name: str, *args: str) -> Server:
    """``python -m bench.peers ARGS --port N`` (see :mod:`bench.peers`)."""
    port = free_port()
    argv = [sys.executable, "-m", "bench.peers", *args, "--port", str(port)]
    return Server(name, argv, port, _env("bench.packs"))


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of ``pid`` and its living descendants (a ``--workers`` server), with
    what each one's children that exited and were waited for used: a worker replaced
    between two readings moves its time into its parent's, so the figure never goes back
    (ci17 measured -978 us/call when a worker's time vanished with it)."""
    total = 0.0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            total += cpu_seconds(current, reaped=True)
        except OSError:
            continue
        pending += _children(current)
    return total


def wait_healthy(server: Server, service: str = "", timeout: float = 30.0) -> float:
    """Poll ``grpc.health.v1`` until ``service`` is SERVING; seconds since the spawn."""
    deadline = time.perf_counter() + timeout
    serving = health_pb2.HealthCheckResponse.SERVING
    with grpc.insecure_channel(server.target, options=CHANNEL_OPTIONS) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            if server.proc.poll() is not None:
                raise RuntimeError(f"{server.name} exited early:\n{server.log_tail()}")
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=0.25)
                if reply.status == serving:
                    return time.perf_counter() - server.started
            except grpc.RpcError:
                pass
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{server.name} not healthy:\n{server.log_tail()}")
            time.sleep(0.005)


def wait_ready(server: Server, timeout: float = 30.0) -> None:
    """Wait until ``server`` accepts connections (for servers without health)."""
    deadline = time.perf_counter() + timeout
    while True:
        if server.proc.poll() is not None:
            raise RuntimeError(f"{server.name} exited early:\n{server.log_tail()}")
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=0.25):
                return
        except OSError:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{server.name} not listening") from None
            time.sleep(0.01)


def cpu_seconds(pid: int, *, reaped: bool = False) -> float:
    """User + system CPU seconds of process ``pid`` (all threads); with ``reaped``, also
    those of its children that exited and were waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    if reaped:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """``VmRSS`` of process ``pid`` in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")
