"""Helpers shared by the gRPC, client and CLI tests: the test plugins and a real server.

Not a conftest: import what you need (``from server_support import ...``; pytest puts
``tests/`` on ``sys.path``).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import testpacks

from control_plane._features.grpc.server import PackServer, ServerOptions, create_server
from control_plane._runtime.plugins import LoadResult, load_registry
from control_plane._runtime.runtime import Runtime, RuntimeConfig, build_runtime

TESTS_DIR = Path(__file__).resolve().parent
ROOT = TESTS_DIR.parent


def load_test_packs() -> LoadResult:
    """Only the test plugin (and a broken one): never the built-in packs."""
    saved = os.environ.pop("CAPABILITY_PACKS_PLUGINS", None)
    try:
        return load_registry(
            builtins=False,
            entry_points_=False,
            extra=[testpacks, ("broken_plugin", testpacks.BrokenPlugin())],
        )
    finally:
        if saved is not None:
            os.environ["CAPABILITY_PACKS_PLUGINS"] = saved


_RUNTIME_KEYS = {
    "max_workers": "handler_threads",
    "default_timeout": "default_timeout",
    "isolate": "isolate",
    "isolation_workers": "isolation_workers",
    "isolation_memory_limit": "isolation_memory_limit",
}


def runtime_and_options(load: LoadResult, **kwargs: Any) -> tuple[Runtime, ServerOptions]:
    """A runtime over ``load`` and server options, from one set of keyword arguments
    (runtime keys: max_workers, default_timeout, isolate...; the rest are ServerOptions).
    The caller closes the runtime after stopping the server (ServerThread.stop does)."""
    config = {_RUNTIME_KEYS[k]: kwargs.pop(k) for k in list(kwargs) if k in _RUNTIME_KEYS}
    if "isolate" in config:
        config["isolate"] = tuple(config["isolate"])
    runtime = build_runtime(RuntimeConfig(**config), load=load)
    return runtime, ServerOptions(**kwargs)


class ServerThread:
    """A real control plane on 127.0.0.1:0, on its own event loop in a thread."""

    def __init__(self, load: LoadResult, **kwargs: object) -> None:
        self._load = load
        self._kwargs = kwargs
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.server: PackServer | None = None
        self.port = 0
        self._error: BaseException | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._start())
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()

    async def _start(self) -> None:
        self.server, self.port = create_server(
            "127.0.0.1:0", *runtime_and_options(self._load, **self._kwargs)
        )
        await self.server.start()

    def start(self) -> ServerThread:
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise self._error
        return self

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self, grace: float | None = 0.5) -> None:
        if self.server is not None:
            fut = asyncio.run_coroutine_threadsafe(self.server.stop(grace), self._loop)
            fut.result(15)
            self.server.runtime.close()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def subprocess_env(**extra: str) -> dict[str, str]:
    """Environment for a `packctl` subprocess that loads only the test plugin."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), str(TESTS_DIR), env.get("PYTHONPATH", "")) if p
    )
    env["CAPABILITY_PACKS_PLUGINS"] = "testpacks"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


PACKCTL = [sys.executable, "-m", "control_plane._features.cli.cli"]


def reap(proc: subprocess.Popen[Any]) -> None:
    """Kill ``proc`` if it is still running (a test's ``finally``: an assertion failed
    before the server was stopped, or it did not stop)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(30)
