"""Helpers of the reliability tests: the fault plugin loader and background traffic.

``Background`` keeps well-behaved calls flowing while a test provokes a fault, so each
test can assert the other traffic's success rate was unaffected.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable

import faultpacks
import testpacks

from control_plane._features.grpc.client import Client
from control_plane._runtime.plugins import LoadResult, load_registry


def load_fault_packs() -> LoadResult:
    """The test plugin and the fault plugin, nothing else."""
    saved = os.environ.pop("CAPABILITY_PACKS_PLUGINS", None)
    try:
        return load_registry(builtins=False, entry_points_=False, extra=[testpacks, faultpacks])
    finally:
        if saved is not None:
            os.environ["CAPABILITY_PACKS_PLUGINS"] = saved


class Background:
    """Threads calling well-behaved packs in a loop; counts successes and failures."""

    def __init__(
        self,
        target: str,
        calls: list[tuple[str, dict[str, object]]] | None = None,
        *,
        threads: int = 2,
        timeout: float = 5.0,
        client_factory: Callable[[str], Client] = Client,
    ) -> None:
        self.target = target
        self.calls = calls or [("test.echo", {"n": 1}), ("test.sync_echo", {"n": 2})]
        self.timeout = timeout
        self.ok = 0
        self.failures: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._client_factory = client_factory
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]

    def _run(self) -> None:
        with self._client_factory(self.target) as client:
            i = 0
            while not self._stop.is_set():
                pack, doc = self.calls[i % len(self.calls)]
                i += 1
                try:
                    client.invoke(pack, doc, timeout=self.timeout)
                except Exception as exc:
                    with self._lock:
                        self.failures[f"{pack}: {type(exc).__name__}: {exc}"] += 1
                else:
                    with self._lock:
                        self.ok += 1
                time.sleep(0.002)

    def __enter__(self) -> Background:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(10)

    def assert_unaffected(self, minimum: int = 5) -> None:
        """Every background call succeeded, and there were at least ``minimum``."""
        assert not self.failures, dict(self.failures)
        assert self.ok >= minimum, f"only {self.ok} background calls completed"
