"""Graceful shutdown of ``packctl serve``: in-flight calls finish, new ones are refused."""

from __future__ import annotations

import signal
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from server_support import reap, subprocess_env
from test_cli import start_serve

from control_plane.core.errors import CapabilityPackError
from control_plane.core.outcome import Outcome
from control_plane.wire.client import Client, Timeout, TransportError


def _call(target: str, pack: str, doc: dict[str, object], timeout: float = 30) -> Outcome:
    with Client(target) as client:
        return client.invoke(pack, doc, timeout=timeout)


def _failing_call(target: str, pack: str, doc: dict[str, object], timeout: float) -> Timeout:
    """A call whose real response is an error: the server's own ``timeout``."""
    with pytest.raises(Timeout) as info:
        _call(target, pack, doc, timeout)
    return info.value


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_in_flight_calls_finish_and_new_ones_are_refused(signum: int) -> None:
    proc, target = start_serve("--plugin", "testpacks", "--grace", "20")
    try:
        with Client(target) as client:
            assert client.health(timeout=10) == "SERVING"
            with ThreadPoolExecutor(8) as pool:
                in_flight: list[Future[Outcome]] = [
                    pool.submit(_call, target, "test.slow", {"seconds": 2.0, "tag": f"a{i}"})
                    for i in range(4)
                ]
                # A sync handler too: it runs in the Invoker's thread pool.
                in_flight += [pool.submit(_call, target, "test.hang", {"seconds": 2.0})]
                # A call whose real response is an error, answered during the grace period:
                # its 2.5 s deadline runs out on the server (budget ~2.25 s) after SIGTERM.
                failing = pool.submit(
                    _failing_call, target, "test.hang_async", {"seconds": 30}, 2.5
                )
                time.sleep(0.7)  # every call is in flight now
                assert not any(f.done() for f in in_flight)
                proc.send_signal(signum)
                time.sleep(0.5)

                # New calls are refused, on a fresh channel and on the open one.
                with Client(target) as fresh, pytest.raises(TransportError):
                    fresh.invoke("test.echo", {}, timeout=5)
                with pytest.raises(CapabilityPackError):
                    client.invoke("test.echo", {}, timeout=5)
                assert not any(f.done() for f in in_flight)
                assert not failing.done()

                outcomes = [f.result(timeout=30) for f in in_flight]
                timed_out = failing.result(timeout=30)
        assert [o.result for o in outcomes[:4]] == [{"done": f"a{i}"} for i in range(4)]
        assert outcomes[4].result == {"slept": True}
        # The pack's own timeout envelope, sent by the server, not the client's deadline.
        assert timed_out.code == "timeout"
        assert timed_out.envelope.origin != "client", timed_out.envelope
        assert timed_out.envelope.recovery_hint
        _, err = proc.communicate(timeout=30)
    finally:
        reap(proc)
    assert proc.returncode == 0, err
    assert "packctl: stopped" in err


def test_calls_longer_than_the_grace_period_are_cut() -> None:
    proc, target = start_serve("--plugin", "testpacks", "--grace", "0.5")
    try:
        with ThreadPoolExecutor(1) as pool:
            long_call = pool.submit(_call, target, "test.slow", {"seconds": 20})
            time.sleep(0.5)
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            with pytest.raises(CapabilityPackError):
                long_call.result(timeout=15)
            proc.communicate(timeout=15)
            assert time.monotonic() - started < 10
    finally:
        reap(proc)
    assert proc.returncode == 0


_STUCK_PLUGIN = """
import time
from typing import Any

from control_plane import Pack, hookimpl

OUTPUT = {
    "type": "object",
    "properties": {"error": {"type": "object", "properties": {"code": {"enum": ["timeout"]}}}},
}


def stuck(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    time.sleep(doc["seconds"])  # ignores its cancellation: a hung sync handler
    return {}


@hookimpl
def register_packs(register: Any) -> None:
    register(Pack("stuck.sleep", "1.0.0", "Sleep, deaf.", {"type": "object"}, OUTPUT, stuck))
"""


def test_a_hung_sync_handler_does_not_keep_the_stopped_server_alive(tmp_path: Path) -> None:
    """After SIGTERM and the grace period the server exits 0 although a sync handler's
    thread is still asleep; the interpreter used to wait for that thread at exit."""
    (tmp_path / "stuckpack.py").write_text(_STUCK_PLUGIN)
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="stuckpack")
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    proc, target = start_serve("--plugin", "stuckpack", "--grace", "1", env=env)
    try:
        with Client(target) as client, ThreadPoolExecutor(1) as pool:
            call = pool.submit(client.invoke, "stuck.sleep", {"seconds": 600}, timeout=900)
            time.sleep(0.5)  # the handler is asleep in its thread
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=120)  # the handler alone sleeps 600 s
            with pytest.raises(CapabilityPackError):
                call.result(timeout=60)
    finally:
        reap(proc)
    assert proc.returncode == 0, err
    assert "1 handler thread(s) still running after the grace period" in err
