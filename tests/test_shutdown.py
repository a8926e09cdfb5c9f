"""Graceful shutdown of ``packctl serve``: in-flight calls finish, new ones are refused."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from server_support import ServerThread, load_test_packs, reap, subprocess_env
from test_cli import start_serve

from control_plane._features.grpc.call_errors import error_from_rpc
from control_plane._features.grpc.client import Client, Timeout, TransportError
from control_plane._features.grpc.drain import Drain
from control_plane._kernel.errors import CapabilityPackError
from control_plane._kernel.outcome import Outcome
from control_plane.v1 import control_plane_pb2 as pb
from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system


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

from control_plane import Pack, Reach, hookimpl

OUTPUT = {
    "type": "object",
    "properties": {"error": {"type": "object", "properties": {"code": {"enum": ["timeout"]}}}},
}


def stuck(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    time.sleep(doc["seconds"])  # ignores its cancellation: a hung sync handler
    return {}


@hookimpl
def register_packs(register: Any) -> None:
    # Declared: it runs in the server's process (the case under test), not in a worker.
    register(
        Pack(
            "stuck.sleep", "1.0.0", "Sleep, deaf.", {"type": "object"}, OUTPUT, stuck,
            reach=Reach(),
        )
    )
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


def _closed_loop_through_sigterm(
    proc: subprocess.Popen[str], target: str, *, callers: int, before: float, after: float
) -> list[tuple[str, bool, grpc.aio.AioRpcError | None]]:
    """``callers`` closed-loop callers of 10 ms calls on 16 connections; SIGTERM after
    ``before`` seconds, go on for ``after`` more. Per call: the status name, whether it
    was sent before the signal, and the error."""
    ended: list[tuple[str, bool, grpc.aio.AioRpcError | None]] = []
    request = pb.InvokePackRequest(pack="worker.whoami", input=b'{"seconds": 0.01}')

    async def run() -> None:
        own = [("grpc.use_local_subchannel_pool", 1)]
        channels = [grpc.aio.insecure_channel(target, options=own) for _ in range(16)]
        stubs = [pb_grpc.ControlPlaneServiceStub(c) for c in channels]
        loop = asyncio.get_running_loop()
        signalled = asyncio.Event()
        end = loop.time() + before + after

        async def caller(k: int) -> None:
            while loop.time() < end:
                sent_before = not signalled.is_set()
                try:
                    await stubs[k % len(stubs)].InvokePack(request, timeout=30)
                    ended.append(("OK", sent_before, None))
                except grpc.aio.AioRpcError as exc:
                    ended.append((exc.code().name, sent_before, exc))
                    await asyncio.sleep(0.01)

        async def signal_it() -> None:
            await asyncio.sleep(before)
            signalled.set()
            proc.send_signal(signal.SIGTERM)

        await asyncio.gather(signal_it(), *(caller(k) for k in range(callers)))
        for channel in channels:
            await channel.close()

    asyncio.run(run())
    return ended


@pytest.mark.parametrize("workers", ["1", "2"])
def test_no_call_is_cancelled_by_a_stop_under_load(workers: str) -> None:
    """SIGTERM while 48 callers keep 10 ms calls coming: every call ends with its answer
    or with UNAVAILABLE saying it did not run, never CANCELLED. gRPC core cancels, at
    shutdown, the calls it has received but the server has not yet picked up; the caller
    cannot tell whether those ran (about 10 of 48 did so before the server drained)."""
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="workerpacks")
    proc, target = start_serve("--plugin", "workerpacks", "--workers", workers, env=env)
    try:
        ended = _closed_loop_through_sigterm(proc, target, callers=48, before=1.5, after=2.5)
        _, err = proc.communicate(timeout=60)
    finally:
        reap(proc)
    assert proc.returncode == 0, err
    statuses = Counter(status for status, _, _ in ended)
    assert statuses["OK"] > 100, statuses
    assert set(statuses) <= {"OK", "UNAVAILABLE"}, statuses
    assert Counter(status for status, before, _ in ended if before)["OK"] > 0
    for _, _, exc in ended:
        if exc is None:
            continue
        error = error_from_rpc(exc)
        assert isinstance(error, TransportError), error
        assert error.rejection.reason == "unavailable"
        if "stopping" in (exc.details() or ""):
            # the server's own refusal: typed, and it says nothing ran
            assert "did not run" in error.rejection.message, error.rejection


def test_calls_picked_up_while_stopping_are_held_then_refused_not_run() -> None:
    """In-process: once the drain begins, a call is held, not run; one whose deadline
    comes first is refused before it (not left to DEADLINE_EXCEEDED); the rest are
    refused once the transport stops. Each refusal is typed and says nothing ran."""
    srv = ServerThread(load_test_packs(), max_workers=4).start()
    assert srv.server is not None
    drain = srv.server.drain
    try:
        with Client(srv.target) as client, ThreadPoolExecutor(2) as pool:
            running = pool.submit(_call, srv.target, "test.slow", {"seconds": 1.0, "tag": "r"})
            time.sleep(0.3)  # running before the drain: it finishes
            asyncio.run_coroutine_threadsafe(_begin(drain), srv._loop).result(5)

            started = time.monotonic()
            with pytest.raises(TransportError) as early:
                client.invoke("test.echo", {"x": 1}, timeout=1.0, request_id="held-1")
            assert time.monotonic() - started < 1.0  # refused before the deadline
            assert early.value.status == grpc.StatusCode.UNAVAILABLE
            assert early.value.rejection.reason == "unavailable"
            assert "did not run" in early.value.rejection.message
            assert early.value.rejection.request_id == "held-1"

            held = pool.submit(client.list_packs, timeout=None)
            time.sleep(0.3)
            assert not held.done()  # held until the transport stops
            assert running.result(timeout=10).result == {"done": "r"}
            stopping = asyncio.run_coroutine_threadsafe(srv.server.stop(2.0), srv._loop)
            with pytest.raises(TransportError) as late:
                held.result(timeout=10)
            assert late.value.rejection.reason == "unavailable"
            stopping.result(10)
        assert drain.refused == 2
    finally:
        srv.stop()


async def _begin(drain: Drain) -> None:
    drain.begin()
