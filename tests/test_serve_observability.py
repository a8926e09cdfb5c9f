"""`packctl serve` end to end: metrics endpoint, error events, incident store, CLI lookups.

One real server process; calls over gRPC with the real client; then the three operator views
(Prometheus text, the JSON-lines event file, `packctl incident` / `packctl errors`) must agree
with what the callers received.
"""

from __future__ import annotations

import json
import re
import resource
import sqlite3
import subprocess
import time
import urllib.request
from pathlib import Path

import grpc
import pytest
import testpacks
from prometheus_client.parser import text_string_to_metric_families
from server_support import PACKCTL, subprocess_env
from test_cli import start_serve, stop_serve

from control_plane._features.grpc.client import Client, PackCallError
from control_plane._kernel.errors import UnknownPack
from control_plane.v1 import control_plane_pb2 as pb
from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def packctl(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PACKCTL, *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )


@pytest.fixture
def served(tmp_path: Path):  # type: ignore[no-untyped-def]
    db = tmp_path / "incidents.db"
    events = tmp_path / "events.jsonl"
    env = subprocess_env(CAPABILITY_PACKS_INCIDENT_DB=str(db))
    proc, target = start_serve(
        "--plugin", "testpacks", "--metrics-port", "0", "--events-file", str(events), env=env
    )
    try:
        banner = proc.banner  # type: ignore[attr-defined]
        match = re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", banner)
        assert match, banner
        yield proc, target, int(match.group(1)), events, env
    finally:
        if proc.poll() is None:
            stop_serve(proc)


def test_serve_exposes_metrics_events_and_incidents(served) -> None:  # type: ignore[no-untyped-def]
    proc, target, metrics_port, events_path, env = served
    got: dict[str, PackCallError] = {}
    with Client(target) as client:
        assert client.invoke("test.echo", {"x": 1}, timeout=10).ok
        for code in ("not_found", "rate_limited", "internal_error"):
            with pytest.raises(PackCallError) as err:
                client.invoke(
                    "test.fail",
                    {"code": code},
                    request_id=f"rq-{code}",
                    timeout=10,
                    metadata=[("x-correlation-task_id", "t-17")],
                )
            got[code] = err.value
        with pytest.raises(UnknownPack):
            client.invoke("no.such.pack", {}, timeout=10)

    samples = scrape(metrics_port)

    def invocations(pack: str, code: str) -> float:
        return sum(
            value
            for (name, labels), value in samples.items()
            if name == "capability_packs_invocations_total"
            and dict(labels).get("pack") == pack
            and dict(labels).get("code") == code
        )

    assert invocations("test.echo", "ok") == 1
    for code in ("not_found", "rate_limited", "internal_error"):
        assert invocations("test.fail", code) == 1, code
    rejected = [
        value
        for (name, labels), value in samples.items()
        if name == "capability_packs_rejected_requests_total" and dict(labels).get("reason")
    ]
    assert sum(rejected) == 1

    # The event stream is written by a batching writer thread: wait (bounded) for its lines.
    wanted = {"not_found", "rate_limited", "internal_error", "unknown_pack"}
    give_up = time.monotonic() + 15
    while True:
        text = events_path.read_text() if events_path.exists() else ""
        events = [json.loads(line) for line in text.splitlines() if line.endswith("}")]
        by_code = {e["code"]: e for e in events}
        if set(by_code) >= wanted or time.monotonic() > give_up:
            break
        time.sleep(0.05)
    assert set(by_code) == wanted
    assert by_code["unknown_pack"]["origin"] == "transport"
    assert by_code["not_found"]["request_id"] == "rq-not_found"
    assert by_code["not_found"]["correlation"] == {"task_id": "t-17"}
    assert testpacks.SECRET not in events_path.read_text()

    ref = got["internal_error"].envelope.reference_id
    assert ref and by_code["internal_error"]["reference_id"] == ref
    stop_serve(proc)  # the store flushes on shutdown; the CLI reads the same file

    shown = packctl("incident", ref, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "RuntimeError" in shown.stdout and "unclassifiable failure" in shown.stdout
    assert testpacks.SECRET not in shown.stdout
    counts = packctl("errors", "--since", "1h", "--by", "code", "--json", env=env)
    assert counts.returncode == 0, counts.stderr
    table = json.loads(counts.stdout)
    assert "internal_error" in json.dumps(table) and "not_found" in json.dumps(table)
    missing = packctl("incident", "ref_0000000000000000", env=env)
    assert missing.returncode != 0


def test_serve_without_a_writable_home_keeps_incidents_in_memory(tmp_path: Path) -> None:
    # A service account whose home is not writable (here: HOME is a file, which stops
    # root too): the default store cannot be created, and serving goes on, saying so.
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    env = subprocess_env(HOME=str(home))
    env.pop("CAPABILITY_PACKS_INCIDENT_DB", None)
    env.pop("XDG_STATE_HOME", None)
    proc, target = start_serve("--plugin", "testpacks", env=env)
    try:
        banner = proc.banner  # type: ignore[attr-defined]
        assert "incidents kept in memory only: cannot create" in banner, banner
        assert f"{home}/.local/state/capability-packs/incidents.db" in banner, banner
        with Client(target, timeout=15) as client:
            assert client.invoke("test.echo", {"n": 1}).result["echo"] == {"n": 1}
    finally:
        err = stop_serve(proc)
    assert proc.returncode == 0, err
    assert "Traceback" not in banner + err


def test_serve_with_an_incident_db_that_cannot_open_exits_2(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = packctl(
        "serve",
        "--address",
        "127.0.0.1:0",
        "--incident-db",
        str(blocker / "incidents.db"),
        env=subprocess_env(),
    )
    assert done.returncode == 2, done.stderr
    assert f"cannot open the incident store {blocker / 'incidents.db'}" in done.stderr
    assert "--no-incident-db" in done.stderr and "Traceback" not in done.stderr


def _dropped(port: int) -> float:
    return scrape(port).get(("capability_packs_event_store_dropped_total", ()), 0.0)


def _fail(target: str, n: int) -> list[str]:
    refs = []
    with Client(target) as client:
        for _ in range(n):
            with pytest.raises(PackCallError) as err:
                client.invoke("test.fail", {"code": "internal_error"}, timeout=10)
            ref = err.value.envelope.reference_id
            assert ref is not None
            refs.append(ref)
    return refs


def _grown(path: Path, size: int) -> int:
    """The size of ``path`` once it is past ``size`` bytes: events are written by a thread
    of their own, shortly after the call is answered (a bound on the wait, not on speed)."""
    give_up = time.monotonic() + 30
    while True:
        now = path.stat().st_size if path.exists() else 0
        if now > size or time.monotonic() > give_up:
            return now
        time.sleep(0.01)


def test_a_database_corrupted_while_serving_is_counted_survived_and_reopened(
    tmp_path: Path,
) -> None:
    # Before: the first write into a database overwritten while the server ran raised
    # sqlite3.DatabaseError ('file is not a database'), which killed the store's writer
    # thread; from then on nothing was written, nothing was counted as dropped
    # (event_store_dropped_total stayed 0 until 10,000 records had piled up in memory),
    # and a database put back in place was never written again.
    db = tmp_path / "incidents.db"
    env = subprocess_env(CAPABILITY_PACKS_INCIDENT_DB=str(db))
    proc, target = start_serve("--plugin", "testpacks", "--metrics-port", "0", env=env, drain=True)
    try:
        match = re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", proc.banner)  # type: ignore[attr-defined]
        assert match
        port = int(match.group(1))
        for part in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            if part.exists():
                with part.open("r+b") as f:
                    f.write(b"X" * 4096)
        refs = _fail(target, 3)
        give_up = time.monotonic() + 120  # a bound on the wait, not on how fast
        while _dropped(port) < 6:  # 3 incidents + 3 events, after the writer's retries
            assert proc.poll() is None
            assert time.monotonic() < give_up, "the failed writes were never counted"
            time.sleep(0.1)
        for part in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            part.unlink(missing_ok=True)
        refs += _fail(target, 1)  # written to a new database at the same path
        assert _fail(target, 0) == [] and _dropped(port) == 6
    finally:
        err = stop_serve(proc)
    assert proc.returncode == 0, err
    assert "writer thread failed" not in err
    for ref in refs:  # the first three from the journal, the last from the new database
        shown = packctl("incident", ref, env=env)
        assert shown.returncode == 0, shown.stderr
        assert f"reference_id: {ref}" in shown.stdout
    with sqlite3.connect(db) as conn:
        stored = {r for (r,) in conn.execute("SELECT reference_id FROM incidents")}
    assert refs[3] in stored


def test_the_events_file_follows_logrotate_rename_removal_and_copytruncate(
    tmp_path: Path,
) -> None:
    # Before: after `mv events.jsonl events.jsonl.1` (logrotate's default) or `rm`, the
    # server kept appending to the renamed or removed file; the path stayed empty for good.
    events = tmp_path / "events.jsonl"
    env = subprocess_env(CAPABILITY_PACKS_INCIDENT_DB=str(tmp_path / "i.db"))
    proc, target = start_serve("--plugin", "testpacks", "--events-file", str(events), env=env)
    try:
        first = _fail(target, 1)
        _grown(events, 0)
        events.rename(tmp_path / "events.jsonl.1")
        second = _fail(target, 1)
        _grown(events, 0)
        events.unlink()
        third = _fail(target, 1)
        _grown(events, 0)
        with events.open("r+b") as f:  # copytruncate: copied elsewhere, emptied in place
            f.truncate(0)
        fourth = _fail(target, 1)
    finally:
        err = stop_serve(proc)
    assert proc.returncode == 0, err

    def refs(path: Path) -> list[str]:
        return [json.loads(line)["reference_id"] for line in path.read_text().splitlines()]

    assert refs(tmp_path / "events.jsonl.1") == first
    assert refs(events) == fourth
    assert not events.read_bytes().startswith(b"\0")  # appended from the new end, no hole
    assert second and third


def test_a_line_torn_by_a_full_disk_does_not_run_into_the_next_event(tmp_path: Path) -> None:
    # Before: a write cut short (disk full; here the file-size limit, which the kernel
    # enforces as it would ENOSPC: part of the line written, the rest refused) left a line
    # with no newline, and the next event was appended to it: two events, one unparseable
    # line. Now the next event starts on a line of its own (only the torn one is lost).
    events = tmp_path / "events.jsonl"
    proc, target = start_serve(
        "--plugin", "testpacks", "--no-incident-db", "--events-file", str(events)
    )
    try:
        first = _fail(target, 1)
        size = _grown(events, 0)
        hard = resource.prlimit(proc.pid, resource.RLIMIT_FSIZE)[1]
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (size + 40, hard))
        _fail(target, 1)  # the caller still gets its answer; the line is cut at 40 bytes
        assert _grown(events, size) == size + 40
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (hard, hard))  # space again
        third = _fail(target, 1)
    finally:
        err = stop_serve(proc)
    assert proc.returncode == 0, err
    lines = events.read_bytes().split(b"\n")
    assert json.loads(lines[0])["reference_id"] == first[0]
    assert json.loads(lines[-2])["reference_id"] == third[0]
    assert lines[-1] == b""
    assert len(lines) == 4  # first, the torn fragment, third


def test_health_answers_while_calls_of_a_pack_hang(tmp_path: Path) -> None:
    # Health is the server's and the packs' load state, not a progress report: with 16 sync
    # and 16 async calls of hung packs in flight, every health service still answers (the
    # hung packs are still SERVING, as docs/grpc.md says) and other packs still run.
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    proc, target = start_serve(
        "--plugin", "testpacks", "--no-incident-db", "--no-event-stream", "--grace", "1"
    )
    try:
        with grpc.insecure_channel(target) as channel:
            stub = pb_grpc.ControlPlaneServiceStub(channel)
            hung = [
                stub.InvokePack.future(
                    pb.InvokePackRequest(pack=pack, input=b'{"seconds": 3600}'), timeout=120
                )
                for pack in ("test.hang", "test.hang_async")
                for _ in range(16)
            ]
            health = health_pb2_grpc.HealthStub(channel)
            serving = health_pb2.HealthCheckResponse.SERVING
            for service in ("", "control_plane.v1.ControlPlaneService", "test.hang"):
                check = health_pb2.HealthCheckRequest(service=service)
                assert health.Check(check, timeout=30).status == serving, service
            echo = stub.InvokePack(pb.InvokePackRequest(pack="test.echo", input=b"{}"), timeout=30)
            assert json.loads(echo.result)["echo"] == {}
            assert not any(call.done() for call in hung)
            check = health_pb2.HealthCheckRequest(service="test.hang_async")
            assert health.Check(check, timeout=30).status == serving
    finally:
        err = stop_serve(proc)
    assert proc.returncode == 0, err
