"""Admission limits against the real server: refused at once, with RetryInfo, never queued."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from reliability_support import Background
from server_support import ServerThread, load_test_packs

from control_plane._features.grpc import status as wire
from control_plane._features.grpc.admission import (
    Admission,
    AdmissionLimits,
    parse_pack_limit,
)
from control_plane._features.grpc.client import Client, Overloaded, RetryPolicy, Timeout
from control_plane._kernel.limits import ConfigError
from control_plane.v1 import control_plane_pb2 as pb
from control_plane.v1 import control_plane_pb2_grpc as pb_grpc


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    limits = AdmissionLimits(max_in_flight=6, per_pack={"test.slow": 2}, retry_after=0.75)
    srv = ServerThread(load_test_packs(), max_workers=2, limits=limits).start()
    yield srv
    srv.stop()


def _slow(target: str, seconds: float = 1.0) -> object:
    with Client(target) as c:
        return c.invoke("test.slow", {"seconds": seconds}, timeout=10)


def test_pack_limit_refuses_at_once_with_retry_info(server: ServerThread) -> None:
    with (
        ThreadPoolExecutor(2) as ex,
        Background(server.target, [("test.echo", {"a": 1})]) as background,
    ):
        running = [ex.submit(_slow, server.target) for _ in range(2)]
        time.sleep(0.3)
        channel = grpc.insecure_channel(server.target)
        stub = pb_grpc.ControlPlaneServiceStub(channel)
        started = time.monotonic()
        with pytest.raises(grpc.RpcError) as caught:
            stub.InvokePack(pb.InvokePackRequest(pack="test.slow", input=b"{}"), timeout=10)
        refused_in = time.monotonic() - started
        channel.close()
        assert [f.result(10).ok for f in running] == [True, True]  # type: ignore[attr-defined]
    background.assert_unaffected()
    assert refused_in < 0.25  # at once, not queued behind the running calls
    rpc = caught.value
    assert rpc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    parsed = wire.parse_status(rpc.code(), rpc.details(), rpc.trailing_metadata())
    assert parsed.error_info is not None
    assert parsed.error_info.reason == "OVERLOADED"
    assert parsed.error_info.domain == "control_plane"
    assert dict(parsed.error_info.metadata)["scope"] == "test.slow"
    assert parsed.retry_delay == 0.75
    assert parsed.code is None  # no pack code: nothing ran
    # the slots are free again
    assert _slow(server.target, 0.01).ok  # type: ignore[attr-defined]


def test_client_raises_overloaded_with_retry_after(server: ServerThread) -> None:
    with ThreadPoolExecutor(2) as ex, Client(server.target) as client:
        running = [ex.submit(_slow, server.target) for _ in range(2)]
        time.sleep(0.3)
        with pytest.raises(Overloaded) as caught:
            client.invoke("test.slow", {}, timeout=10)
        for f in running:
            f.result(10)
    assert caught.value.retry_after == 0.75
    assert caught.value.status == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_a_retry_policy_waits_out_an_overload(server: ServerThread) -> None:
    """``overloaded`` says nothing ran and when to come back: a client with a RetryPolicy
    resends it after ``retry_after`` (0.75 s here, grpc's pushback, not the 0.05 s backoff)
    and gets the answer."""
    policy = RetryPolicy(attempts=5, backoff=0.05)
    with ThreadPoolExecutor(2) as ex, Client(server.target, retry=policy) as client:
        running = [ex.submit(_slow, server.target) for _ in range(2)]
        time.sleep(0.3)
        started = time.monotonic()
        outcome = client.invoke("test.slow", {"seconds": 0.01, "tag": "late"}, timeout=20)
        waited = time.monotonic() - started
        for f in running:
            f.result(10)
    assert outcome.result == {"done": "late"}
    assert waited >= 0.7


def test_global_limit_covers_every_pack(server: ServerThread) -> None:
    with ThreadPoolExecutor(6) as ex, Client(server.target) as client:
        running = [
            ex.submit(lambda: Client(server.target).invoke("test.hang_async", {"seconds": 1}))
            for _ in range(6)
        ]
        time.sleep(0.3)
        with pytest.raises(Overloaded) as caught:
            client.invoke("test.echo", {}, timeout=10)
        assert "all packs" in caught.value.details
        for f in running:
            assert f.result(10).ok
        assert client.invoke("test.echo", {}, timeout=10).ok


def test_timed_out_and_cancelled_calls_release_their_slots(server: ServerThread) -> None:
    with Client(server.target) as client:
        for _ in range(4):  # more than the pack limit of 2: slots must come back
            with pytest.raises(Timeout):
                client.invoke("test.slow", {"seconds": 5}, timeout=0.3)
        channel = grpc.insecure_channel(server.target)
        stub = pb_grpc.ControlPlaneServiceStub(channel)
        for _ in range(3):
            call = stub.InvokePack.future(
                pb.InvokePackRequest(pack="test.slow", input=b'{"seconds": 5}'), timeout=10
            )
            time.sleep(0.1)
            call.cancel()
        channel.close()
        time.sleep(0.2)
        assert client.invoke("test.slow", {"seconds": 0.01}, timeout=5).ok
        assert client.invoke("test.slow", {"seconds": 0.01}, timeout=5).ok


def test_deadline_bounds_the_wait_for_a_thread(server: ServerThread) -> None:
    # two threads for sync handlers; a third sync call waits for one, but only until
    # its own deadline, and then gets `timeout`.
    with ThreadPoolExecutor(3) as ex, Client(server.target) as client:
        hogs = [
            ex.submit(lambda: Client(server.target).invoke("test.hang", {"seconds": 1.5}))
            for _ in range(2)
        ]
        time.sleep(0.2)
        started = time.monotonic()
        with pytest.raises(Timeout):
            client.invoke("test.hang", {"seconds": 0}, timeout=0.5)  # sync, declares timeout
        assert time.monotonic() - started < 1.0
        for f in hogs:
            f.result(10)


def test_admission_counts_only_known_packs() -> None:
    limits = AdmissionLimits(max_in_flight=3, default_per_pack=1)
    admission = Admission(limits, ["a", "b"])
    assert admission.enter("a") is None
    assert admission.enter("a") == ("a", 1)
    assert admission.enter("zzz-unknown") is None  # no per-pack entry created
    assert admission.enter("b") is None
    assert admission.enter("b") == ("global", 3)
    for name in ("a", "zzz-unknown", "b"):
        admission.leave(name)
    assert admission.in_flight == 0
    assert admission.pack_in_flight("a") == 0
    assert "zzz-unknown" not in admission._pack_in_flight
    assert admission.refused == {"a": 1, "global": 1}


def test_limit_configuration_is_checked() -> None:
    assert parse_pack_limit("test.slow=3") == ("test.slow", 3)
    for bad in ("test.slow", "=3", "x=0", "x=y"):
        with pytest.raises(ValueError):
            parse_pack_limit(bad)
    with pytest.raises(ConfigError, match="unknown pack"):
        Admission(AdmissionLimits(per_pack={"nope": 1}), ["a"])
    assert not AdmissionLimits().enabled


def test_packctl_names_an_overload_and_when_to_come_back(
    server: ServerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    """An overload is a refusal the server sent, not a connection problem."""
    import json

    from control_plane._features.cli import cli

    with ThreadPoolExecutor(2) as ex:
        running = [ex.submit(_slow, server.target) for _ in range(2)]
        time.sleep(0.3)
        argv = ["call", "test.slow", "--target", server.target, "--output", "json"]
        code = cli.main([*argv, "--input", "{}"])
        for f in running:
            f.result(10)
    problem = json.loads(capsys.readouterr().out)["problem"]
    assert code == cli.EXIT_USAGE
    assert problem["kind"] == "overloaded" and problem["retry_after"] == 0.75
