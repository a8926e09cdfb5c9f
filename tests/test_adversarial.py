"""The adversarial suite: hostile packs against real ``packctl serve`` processes.

One test per class of issue 15 ("the closed set holds for every outcome, and the server
survives every pack"). Every call goes through :mod:`raw_wire`, which decodes every byte
that comes back; every failure must carry a code from the pack's effective vocabulary
(as DescribePack states it), the details must decode, and the server must still be up.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from hostilepacks import SECRET
from raw_wire import Received, Serve, call_raw, invoke, serve_env, vocabulary
from tiers import starts_processes

from control_plane._features.grpc.status import MAX_DETAILS_BYTES, MAX_STATUS_MESSAGE_BYTES
from control_plane._features.observability.incident_store import IncidentStore
from control_plane._kernel.bounds import MAX_CHECKS, MAX_PARTIAL_NODES, MAX_RETRY_AFTER, MAX_TEXT
from control_plane._kernel.validation import MORE_CHECKS
from control_plane.v1 import control_plane_pb2 as pb

PACKS = ("hostile.sync", "hostile.async", "hostile.iso")


@pytest.fixture(scope="module")
@starts_processes
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    db = tmp_path_factory.mktemp("adversarial") / "incidents.db"
    with Serve(db, "--threads", "16") as server:
        yield server


def closed(server: Serve, pack: str, received: Received) -> str:
    """The code ``received`` carries, checked against the closed set; the server is up."""
    assert not received.problems, received.problems
    assert received.code is not None, f"no code: {received.status} {received.message!r}"
    if received.code != "ok":
        assert received.code in vocabulary(server.channel, pack), received.code
        assert received.error_info is not None and received.error_info.domain == pack
    assert server.alive(), "the server died"
    assert invoke(server.channel, "hostile.noop", {}).code == "ok"
    return received.code


# -- 1. the wire encoding is total ----------------------------------------------------------


@pytest.mark.system
@pytest.mark.parametrize("pack", PACKS)
def test_every_outcome_encodes(served: Serve, pack: str) -> None:
    got = invoke(served.channel, pack, {"mode": "retry_after_huge", "retry_after": "1e19"})
    assert closed(served, pack, got) == "rate_limited"
    assert got.retry_delay == MAX_RETRY_AFTER
    assert got.pack_error is not None and got.pack_error.retry_after == MAX_RETRY_AFTER

    for mode in ("bigint_partial", "bigint_returned_error", "surrogate_partial"):
        got = invoke(served.channel, pack, {"mode": mode})
        assert closed(served, pack, got) == "schema_mismatch", mode
        assert got.pack_error is not None and got.pack_error.partial
    got = invoke(served.channel, pack, {"mode": "bigint_partial"})
    assert b"1180591620717411303424" in got.pack_error.partial_result  # type: ignore[union-attr]

    got = invoke(served.channel, pack, {"mode": "surrogate"})
    assert closed(served, pack, got) == "not_found"
    assert "\ufffd" in got.pack_error.message  # type: ignore[union-attr]

    got = invoke(served.channel, pack, {"mode": "nan_retry"})
    assert closed(served, pack, got) == "rate_limited"
    assert got.retry_delay is not None and 0 <= got.retry_delay <= MAX_RETRY_AFTER


# -- 2. the details always fit gRPC's metadata limits ----------------------------------------


@pytest.mark.parametrize("pack", PACKS)
def test_details_fit_and_say_what_was_cut(served: Serve, pack: str) -> None:
    got = invoke(served.channel, pack, {"mode": "huge_partial", "n": 1_000_000})
    assert closed(served, pack, got) == "schema_mismatch"
    assert 0 < got.details_bytes <= MAX_DETAILS_BYTES
    assert "partial_result" in got.metadata["truncated"]
    assert int(got.metadata["partial_result_bytes"]) > MAX_DETAILS_BYTES

    got = invoke(served.channel, pack, {"mode": "many_violations", "n": 1000})
    assert closed(served, pack, got) == "schema_mismatch"
    assert 0 < got.details_bytes <= MAX_DETAILS_BYTES

    got = invoke(served.channel, pack, {"mode": "raised_violations", "n": 1000})
    assert closed(served, pack, got) == "schema_mismatch"
    assert 0 < got.details_bytes <= MAX_DETAILS_BYTES
    kept, total = got.metadata["violations"].split("/")
    assert total == "1000" and 0 < int(kept) < 1000
    assert got.pack_error is not None and len(got.pack_error.violations) == int(kept)

    got = invoke(served.channel, pack, {"mode": "many_checks", "n": 1000}, strict=True)
    assert closed(served, pack, got) == "artifact_failed"
    assert 0 < got.details_bytes <= MAX_DETAILS_BYTES
    kept, total = got.metadata["checks"].split("/")
    assert total == "1000" and int(kept) < 1000
    assert got.error_info is not None and got.error_info.reason == "ARTIFACT_FAILED"

    got = invoke(served.channel, pack, {"mode": "huge_message", "n": 200_000})
    assert closed(served, pack, got) == "not_found"
    assert len(got.message.encode()) <= MAX_STATUS_MESSAGE_BYTES


@pytest.mark.parametrize("pack", PACKS)
def test_the_work_per_outcome_is_bounded_not_the_count(served: Serve, pack: str) -> None:
    """100,000 checks or keys cost a bounded amount of scrubbing: the first MAX_CHECKS are
    listed, the rest summed up in one check that strict mode still counts; a partial result
    keeps at most MAX_PARTIAL_NODES values."""
    got = invoke(served.channel, pack, {"mode": "late_fail", "n": 100_000}, strict=True)
    assert closed(served, pack, got) == "artifact_failed"
    assert got.pack_error is not None
    assert [c.id for c in got.pack_error.checks] == [MORE_CHECKS]  # the only failing record

    got = invoke(served.channel, pack, {"mode": "late_fail", "n": 100_000})
    assert closed(served, pack, got) == "ok"
    assert got.validation is not None
    checks = got.validation.checks
    assert len(checks) == MAX_CHECKS + 1
    assert checks[-1].id == MORE_CHECKS and checks[-1].severity == pb.SEVERITY_FAIL
    assert f"{100_001 - MAX_CHECKS} more checks" in checks[-1].message

    got = invoke(served.channel, pack, {"mode": "wide_partial", "n": 200_000})
    assert closed(served, pack, got) == "schema_mismatch"
    total = int(got.metadata["partial_result_keys"].split("/")[1])
    assert MAX_PARTIAL_NODES - 10 <= total <= MAX_PARTIAL_NODES  # of 200,001 ("items" broke)


# -- 3. cancellations a pack raises are answered ---------------------------------------------


@pytest.mark.parametrize("pack", PACKS)
@pytest.mark.parametrize("mode", ["cancelled", "futures_cancelled", "generator_exit"])
def test_cancellations_a_pack_raises_are_answered(served: Serve, pack: str, mode: str) -> None:
    got = invoke(served.channel, pack, {"mode": mode}, timeout=20)
    assert closed(served, pack, got) == "internal_error"


def test_awaiting_a_cancelled_task_is_answered(served: Serve) -> None:
    got = invoke(served.channel, "hostile.async", {"mode": "await_cancelled"}, timeout=20)
    assert closed(served, "hostile.async", got) == "internal_error"


# -- 4. nothing a pack raises or returns ends the server ------------------------------------


@pytest.mark.parametrize("pack", PACKS)
@pytest.mark.parametrize(
    "mode", ["keyboard_interrupt", "system_exit", "exiting_dict", "noisy_str", "swap_request_id"]
)
def test_base_exceptions_do_not_end_the_server(served: Serve, pack: str, mode: str) -> None:
    got = invoke(served.channel, pack, {"mode": mode}, timeout=20)
    assert closed(served, pack, got) in ("internal_error", "schema_mismatch")


# -- 5. isolated workers send data, never pickles -------------------------------------------


@pytest.mark.parametrize("mode", ["exit_on_unpickle", "exit_on_unpickle_error"])
def test_isolated_replies_are_data(served: Serve, mode: str) -> None:
    got = invoke(served.channel, "hostile.iso", {"mode": mode}, timeout=20)
    assert closed(served, "hostile.iso", got) in ("schema_mismatch", "not_found")


# -- 6. a code that pretends to be a string ---------------------------------------------------


@pytest.mark.parametrize("pack", PACKS)
def test_forged_string_codes_do_not_pass(served: Serve, pack: str) -> None:
    got = invoke(served.channel, pack, {"mode": "forged_code"}, timeout=20)
    assert closed(served, pack, got) == "internal_error"
    assert got.pack_error is not None and got.pack_error.code == "internal_error"


# -- 7. malformed protobuf requests -----------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"\xff\xff\xff\xff", b"\x0a\x05ab", b"\x0a\x02\xff\xfe", b"\x12\x80\x80\x80\x80\x80"],
)
def test_malformed_requests_are_invalid_argument(served: Serve, raw: bytes) -> None:
    got = call_raw(served.channel, "InvokePack", raw)
    assert not got.problems, got.problems
    assert got.status == grpc.StatusCode.INVALID_ARGUMENT, (got.status, got.message)
    assert got.error_info is not None and got.error_info.domain == "control_plane"
    assert "DecodeError" not in got.message and "parsing" not in got.message.lower()
    assert got.bad_request is not None and got.bad_request.field_violations[0].field == "request"
    assert served.alive()


# -- 8. availability and bounded texts -------------------------------------------------------


@pytest.mark.system
def test_a_hanging_pack_does_not_starve_the_others(tmp_path: Path) -> None:
    with Serve(tmp_path / "i.db") as server:  # the default pool size
        with ThreadPoolExecutor(8) as pool:
            hung = [
                pool.submit(
                    invoke,
                    server.channel,
                    "hostile.hang",
                    {"mode": "hang", "seconds": 30},
                    timeout=1.5,
                )
                for _ in range(8)
            ]
            for future in hung:  # every one of them has overrun its deadline now
                assert future.result().status in (
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                )
            # Their threads still run; the other sync packs still get threads.
            for _ in range(5):
                assert invoke(server.channel, "hostile.noop", {}, timeout=5).code == "ok"
                assert (
                    invoke(server.channel, "hostile.sync", {"mode": "ok"}, timeout=5).code == "ok"
                )
        assert server.alive()
        server.kill()


@pytest.mark.system
def test_what_an_isolated_worker_prints_reaches_stderr_scrubbed(tmp_path: Path) -> None:
    """stdout, ``sys.stderr`` and raw writes to fd 2 of an isolated pack's worker pass the
    scrubbing relay, whole lines, the last unfinished one flushed when the worker ends."""
    with Serve(tmp_path / "incidents.db") as server:
        got = invoke(server.channel, "hostile.iso", {"mode": "print_secret", "tag": "iso-42"})
        assert got.code == "ok"
        err = server.stop()
    assert SECRET not in err
    # Each relayed line names its worker ("[isolated worker of hostile.iso] iso-42 ...").
    label = "[isolated worker of hostile.iso] "
    mine = [line.removeprefix(label) for line in err.splitlines() if line.startswith(label)]
    assert "iso-42 stdout password=[REDACTED]" in mine
    assert any(line.startswith("iso-42 stderr Authorization: Bearer [REDACTED]") for line in mine)
    assert "iso-42 fd2 token=[REDACTED]" in mine
    assert "iso-42 unfinished password=[REDACTED]" in mine


def test_huge_texts_are_bounded_before_they_are_stored(served: Serve) -> None:
    got = invoke(served.channel, "hostile.sync", {"mode": "huge_text", "n": 5_000_000})
    assert closed(served, "hostile.sync", got) == "internal_error"
    ref = got.metadata["reference_id"]
    store = IncidentStore(served.db, read_only=True)
    incident = store.get(ref)
    assert incident is not None
    assert len(incident.traceback) < MAX_TEXT + 4096
    assert "[cut:" in incident.traceback or "truncated" in incident.traceback


# -- 9. SIGTERM to the process group drains isolated calls ----------------------------------


@pytest.mark.system
def test_sigterm_to_the_process_group_drains_isolated_calls(tmp_path: Path) -> None:
    server = Serve(tmp_path / "i.db", "--grace", "20")
    try:
        with ThreadPoolExecutor(2) as pool:
            calls = [
                pool.submit(
                    invoke, server.channel, "hostile.iso", {"mode": "sleep", "seconds": 2, "tag": i}
                )
                for i in range(2)
            ]
            time.sleep(0.8)  # both calls are running in the workers now
            os.killpg(server.proc.pid, signal.SIGTERM)  # systemd / docker stop / Ctrl-C
            results = [f.result(timeout=30) for f in calls]
        assert [r.code for r in results] == ["ok", "ok"], [(r.status, r.message) for r in results]
        assert [r.result for r in results] == [{"items": [0]}, {"items": [1]}]
        assert server.proc.wait(30) == 0
    finally:
        server.kill()


# -- 10. reference ids survive kill -9 -----------------------------------------------------


@pytest.mark.system
def test_reference_ids_resolve_after_kill_9(tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    server = Serve(db)
    refs: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def burst() -> None:
        channel = grpc.insecure_channel(server.target)
        while not stop.is_set():
            got = invoke(channel, "hostile.sync", {"mode": "system_exit"}, timeout=5)
            if got.code != "internal_error":
                break
            with lock:
                refs.append(got.metadata["reference_id"])
        channel.close()

    try:
        threads = [threading.Thread(target=burst) for _ in range(6)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while len(refs) < 300 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.killpg(server.proc.pid, signal.SIGKILL)  # mid-burst
        stop.set()
        for t in threads:
            t.join(30)
    finally:
        server.kill()
    with lock:
        handed_out = list(refs)
    assert len(handed_out) >= 300
    store = IncidentStore(db, read_only=True)
    missing = [ref for ref in handed_out if store.get(ref) is None]
    assert not missing, f"{len(missing)} of {len(handed_out)} reference ids resolve to nothing"
    # A store opened for writing recovers the journal into the database.
    with IncidentStore(db) as writer:
        assert writer.counts()["incidents"] >= len(handed_out)


# -- 11. authenticate before UNIMPLEMENTED ---------------------------------------------------


@pytest.mark.system
def test_unknown_methods_need_authentication_first(tmp_path: Path) -> None:
    token = "t" * 32
    env = serve_env(tmp_path / "i.db", ADV_TOKENS=token)
    with Serve(tmp_path / "i.db", "--auth-token-env", "ADV_TOKENS", env=env) as server:
        for method in ("/control_plane.v1.ControlPlaneService/NoSuch", "/no.such.Service/Call"):
            got = call_raw(server.channel, method, b"")
            assert got.status == grpc.StatusCode.UNAUTHENTICATED, (method, got.status)
            authed = call_raw(
                server.channel, method, b"", metadata=(("authorization", f"Bearer {token}"),)
            )
            assert authed.status == grpc.StatusCode.UNIMPLEMENTED
        assert server.alive()


# -- 12. an isolated (untrusted) pack cannot switch off the parent's guarantees -------------


def test_an_isolated_pack_cannot_switch_off_scrubbing(served: Serve) -> None:
    got = invoke(served.channel, "hostile.iso", {"mode": "disable_scrubbing"}, timeout=20)
    assert closed(served, "hostile.iso", got) == "schema_mismatch"
    for pack in ("hostile.sync", "hostile.iso"):
        got = invoke(served.channel, pack, {"mode": "secret"})
        assert closed(served, pack, got) == "not_found"
        everything = got.message + str(got.pack_error) + str(got.trailers)
        assert SECRET not in everything
