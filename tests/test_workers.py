"""``packctl serve --workers N``: N processes on one port, one supervisor.

Real ``packctl serve`` processes, real clients on fresh channels (a channel is one
connection, and the kernel hands each new connection to one worker).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import pytest
from child_processes import tied
from prometheus_client.parser import text_string_to_metric_families
from server_support import PACKCTL, reap, subprocess_env
from test_cli import start_serve, stop_serve

from control_plane._features.grpc.client import Client, InternalError, TransportError
from control_plane._features.grpc.workers import (
    MAX_WORKERS,
    Supervisor,
    WorkerInfo,
    WorkerMetricsCollector,
    available_cores,
    parse_workers,
)
from control_plane._features.observability.incident_store import IncidentStore
from control_plane._kernel.errors import CapabilityPackError
from control_plane._kernel.outcome import Outcome

# serve --workers: every test starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system

ENV = subprocess_env(CAPABILITY_PACKS_PLUGINS="workerpacks")
#: Fresh connections tried before giving up on seeing every worker answer.
MAX_CONNECTIONS = 400


def _parent(pid: int) -> int:
    """``pid``'s parent; 0 for a process that has already exited."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return 0
    return int(stat.rsplit(")", 1)[1].split()[1])


#: A channel of its own connection: grpc shares connections between channels to the same
#: target by default, which would send every concurrent test call to one worker.
OWN_CONNECTION = (("grpc.use_local_subchannel_pool", 1),)


def _whoami(target: str, **doc: object) -> Outcome:
    with Client(target, options=OWN_CONNECTION) as client:
        return client.invoke("worker.whoami", doc, timeout=60)


def _pids_answering(target: str, want: int) -> set[int]:
    pids: set[int] = set()
    for _ in range(MAX_CONNECTIONS):
        pids.add(_whoami(target).result["pid"])
        if len(pids) >= want:
            break
    return pids


@pytest.fixture
def two_workers(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str, Path]]:
    proc, target = start_serve(
        "--plugin",
        "workerpacks",
        "--workers",
        "2",
        "--grace",
        "20",
        "--metrics-port",
        "0",
        "--events-file",
        str(tmp_path / "events.jsonl"),
        "--incident-db",
        str(tmp_path / "incidents.db"),
        env=ENV,
    )
    try:
        yield proc, target, tmp_path
    finally:
        reap(proc)


def _metrics_url(banner: str) -> str:
    for line in banner.splitlines():
        if line.startswith("packctl: metrics on ") and "(all workers)" in line:
            return line.split()[3]
    raise AssertionError(f"no merged metrics endpoint in:\n{banner}")


def _worker_pids(banner: str) -> list[int]:
    line = next(x for x in banner.splitlines() if "workers (pids " in x)
    return [int(p) for p in line.split("(pids ")[1].split(")")[0].split(", ")]


def test_two_workers_share_the_port_and_both_answer(two_workers: tuple) -> None:
    proc, target, _ = two_workers
    banner: str = proc.banner  # type: ignore[attr-defined]
    assert "with 2 workers" in banner
    pids = _worker_pids(banner)
    assert len(set(pids)) == 2
    assert all(_parent(pid) == proc.pid for pid in pids)  # children of the supervisor
    assert _pids_answering(target, 2) == set(pids)
    with Client(target) as client:
        assert client.health(timeout=10) == "SERVING"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert err.rstrip().endswith("packctl: stopped")


def test_metrics_events_and_incidents_from_every_worker_are_complete(
    two_workers: tuple,
) -> None:
    proc, target, tmp = two_workers
    pids = set(_worker_pids(proc.banner))
    answered: dict[str, list[int]] = {"ok": [], "network_error": [], "internal_error": []}
    references: list[str] = []
    connections = 0
    # Fresh connections until every worker has served each path at least twice.
    while connections < MAX_CONNECTIONS:
        connections += 1
        with Client(target, options=OWN_CONNECTION) as client:
            pid = client.invoke("worker.whoami", {}, timeout=60).result["pid"]
            answered["ok"].append(pid)
            with pytest.raises(CapabilityPackError) as refused:
                client.invoke("worker.refused", {}, timeout=60)
            assert refused.value.code == "network_error"
            answered["network_error"].append(pid)
            with pytest.raises(InternalError) as broken:
                client.invoke("worker.broken", {}, timeout=60)
            references.append(broken.value.reference_id)
            answered["internal_error"].append(pid)
        if all(answered["ok"].count(p) >= 2 for p in pids):
            break
    calls = len(answered["ok"])
    assert set(answered["ok"]) == pids

    # One scrape shows every worker; the sums are every call made.
    text = urllib.request.urlopen(_metrics_url(proc.banner), timeout=30).read().decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    up = {s.labels["worker"]: s.value for s in families["capability_packs_worker_up"].samples}
    assert up == {"0": 1.0, "1": 1.0}
    per_worker: dict[tuple[str, str], float] = {}
    for sample in families["capability_packs_invocations"].samples:
        if sample.name.endswith("_total"):
            key = (sample.labels["pack"], sample.labels["worker"])
            per_worker[key] = per_worker.get(key, 0) + sample.value
    for pack in ("worker.whoami", "worker.refused", "worker.broken"):
        assert sum(v for (p, _), v in per_worker.items() if p == pack) == calls
        assert {w for (p, w) in per_worker if p == pack} == {"0", "1"}

    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err

    # The event file: one whole JSON line per failed call, from both workers.
    lines = (tmp / "events.jsonl").read_bytes().splitlines()
    events = [orjson.loads(line) for line in lines]
    assert len(events) == 2 * calls
    codes = [e["code"] for e in events]
    assert codes.count("network_error") == codes.count("internal_error") == calls
    refused_from = {
        int(e["message"].rsplit(" ", 1)[1]) for e in events if e["code"] == "network_error"
    }
    assert refused_from == pids

    # The incident store: every reference id a caller got, and every event.
    store = IncidentStore(tmp / "incidents.db", read_only=True)
    for ref in references:
        incident = store.get(ref)
        assert incident is not None, ref
        assert "broken in worker" in incident.traceback
    assert store.counts() == {"incidents": calls, "events": 2 * calls}
    assert {
        int(i.traceback.rsplit("broken in worker ", 1)[1].split()[0])
        for i in store.recent(limit=2 * calls)
    } == pids


def test_sigterm_drains_every_worker_with_no_lost_response(two_workers: tuple) -> None:
    proc, target, _ = two_workers
    pids = set(_worker_pids(proc.banner))
    with ThreadPoolExecutor(16) as pool:
        futures = [pool.submit(_whoami, target, seconds=3.0, tag=f"t{i}") for i in range(16)]
        time.sleep(1.0)  # every call is in flight now
        assert not any(f.done() for f in futures)
        proc.send_signal(signal.SIGTERM)
        outcomes = [f.result(timeout=60) for f in futures]
    assert [o.result["tag"] for o in outcomes] == [f"t{i}" for i in range(16)]
    # 16 connections over 2 workers: both had calls in flight when the signal came (the
    # chance that one got all 16 is 2**-15; the assertion below then says so).
    assert {o.result["pid"] for o in outcomes} == pids
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert err.count('"event":"stopping"') == 2
    assert err.rstrip().endswith("packctl: stopped")


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2], ids=str)
def test_stray_signals_neither_stop_the_supervisor_nor_its_workers(
    two_workers: tuple, signum: int
) -> None:
    """``SIGHUP`` / ``SIGUSR1`` / ``SIGUSR2`` to the supervisor and to each worker (a
    closed terminal signals them all) while 16 calls are in flight: every call is
    answered, the same two workers keep serving and the supervisor is still there; only
    ``SIGTERM`` stops it. On main the supervisor died of the signal (its workers then
    drained and stopped with it)."""
    proc, target, _ = two_workers
    pids = _worker_pids(proc.banner)
    with ThreadPoolExecutor(16) as pool:
        futures = [pool.submit(_whoami, target, seconds=3.0, tag=f"t{i}") for i in range(16)]
        time.sleep(1.0)  # every call is in flight now
        assert not any(f.done() for f in futures)
        for pid in (proc.pid, *pids):
            os.kill(pid, signum)
        outcomes = [f.result(timeout=60) for f in futures]
    assert [o.result["tag"] for o in outcomes] == [f"t{i}" for i in range(16)]
    time.sleep(0.5)  # the supervisor's loop looks every 0.1 s
    assert proc.poll() is None
    assert _pids_answering(target, 2) == set(pids)  # neither worker was replaced
    err = stop_serve(proc)
    assert proc.returncode == 0, err
    name = signal.Signals(signum).name
    # One line from the supervisor, one from each worker.
    assert err.count(f"ignored signal {name}") == 3, err
    assert err.rstrip().endswith("packctl: stopped")


def test_a_worker_that_dies_is_replaced(two_workers: tuple) -> None:
    proc, target, _ = two_workers
    first, second = _worker_pids(proc.banner)
    os.kill(first, signal.SIGKILL)
    log = []
    for line in proc.stderr:  # the supervisor says when the replacement serves
        log.append(line)
        if "worker 0 restarted" in line:
            break
    seen: set[int] = set()
    for _ in range(MAX_CONNECTIONS):
        try:
            seen.add(_whoami(target).result["pid"])
        except CapabilityPackError:
            continue  # the connection reached the dying worker
        if len(seen - {first, second}) == 1 and second in seen:
            break
    replacement = seen - {first, second}
    assert len(replacement) == 1
    assert _parent(replacement.pop()) == proc.pid
    proc.send_signal(signal.SIGTERM)
    _, rest = proc.communicate(timeout=60)
    err = "".join(log) + rest
    assert f"worker 0 (pid {first}) exited with -9" in err
    assert "worker 0 restarted" in err
    assert proc.returncode == 0, err


@pytest.mark.parametrize("how", ["SIGSTOP", "blocked loop"])
def test_a_worker_that_stops_answering_is_killed_and_replaced(how: str) -> None:
    """A worker that is alive but silent (stopped, or its event loop blocked by a pack)
    still gets connections from the kernel, and those calls hang: the supervisor misses
    its heartbeats for --worker-timeout seconds, kills it and starts another."""
    proc, target = _serve_with_worker_timeout("2")
    try:
        first, second = _worker_pids(proc.banner)
        if how == "SIGSTOP":
            os.kill(first, signal.SIGSTOP)
        else:  # a pack that blocks the loop of whichever worker the call reaches
            _block_a_worker(target, timeout=1)
        log: list[str] = []
        assert proc.stderr is not None
        hang_guard = threading.Timer(120, proc.kill)  # never replaced: fail, do not hang
        hang_guard.start()
        try:
            for line in proc.stderr:
                log.append(line)
                if "restarted" in line:
                    break
        finally:
            hang_guard.cancel()
        text = "".join(log)
        silent = first if f"(pid {first}) sent no heartbeat" in text else second
        assert re.search(
            rf"\(pid {silent}\) sent no heartbeat for 2\.\d s \(--worker-timeout 2;", text
        )
        assert _gone(silent)
        answering = _pids_answering(target, 2)
        assert silent not in answering and len(answering) == 2
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=60)
    finally:
        reap(proc)
    assert proc.returncode == 0, text + rest


def _gone(pid: int, within: float = 60.0) -> bool:
    """True once ``pid`` has exited (a hang guard, not a measure of speed)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":  # exited, not yet reaped by its (new) parent
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGALRM])
def test_workers_do_not_outlive_their_supervisor(two_workers: tuple, how: int) -> None:
    """A supervisor that dies (kill -9, or a signal it does not handle: SIGALRM, a crash;
    SIGHUP it ignores, test_stray_signals_neither_stop_the_supervisor_nor_its_workers)
    takes its workers with it: an orphaned worker would go on serving the port, unsupervised
    (no restarts, no merged metrics) and joined by the next supervisor's workers."""
    proc, target, _ = two_workers
    pids = _worker_pids(proc.banner)
    assert _pids_answering(target, 2) == set(pids)
    proc.send_signal(how)
    proc.wait(timeout=60)
    assert all(_gone(pid) for pid in pids), [_parent(p) for p in pids]


def test_killing_silent_workers_never_stops_the_server() -> None:
    """Kills for silence are not crashes: callers that keep blocking workers' loops must
    not use up the restart budget (5 exits a minute) and stop every worker with it."""
    proc, target = _serve_with_worker_timeout("1", drain=True)
    try:
        _, said = proc.drained  # type: ignore[attr-defined]
        deadline = time.monotonic() + 180  # a hang guard, not a measure of speed
        while time.monotonic() < deadline:
            kills = sum("sent no heartbeat" in line for line in said)
            if kills > 6:
                break
            _block_a_worker(target, timeout=2.5)
            time.sleep(0.2)  # while both restart, calls fail at once
        assert kills > 6, "".join(said)
        assert proc.poll() is None, "".join(said)
        assert _serving_again(target, 2), "".join(said)
    finally:
        err = stop_serve(proc)
        reap(proc)
    assert "more than 5 worker exits" not in err
    assert proc.returncode == 0, err


def test_sigterm_while_a_worker_restarts_is_a_clean_stop(tmp_path: Path) -> None:
    """A worker still starting when SIGTERM arrives has no call to drain: the stop is
    clean (exit 0), not a failed worker."""
    slow = tmp_path / "slow-start"
    env = {**ENV, "WORKERPACKS_SLOW_START": str(slow)}
    proc, target = start_serve("--plugin", "workerpacks", "--workers", "2", env=env, drain=True)
    try:
        _, said = proc.drained  # type: ignore[attr-defined]
        victim = min(_pids_answering(target, 2))
        slow.touch()  # the replacement hangs in its start-up
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 60  # a hang guard
        while time.monotonic() < deadline and not any(
            f"(pid {victim}) exited with -9" in line for line in said
        ):
            time.sleep(0.1)
        time.sleep(0.5)  # the replacement is spawned and importing the plugin
        assert any(f"(pid {victim}) exited with -9" in line for line in said), "".join(said)
    finally:
        err = stop_serve(proc)
        reap(proc)
    assert "restarted" not in err, err
    assert proc.returncode == 0, err


def _serving_again(target: str, want: int) -> set[int]:
    """:func:`_pids_answering` once the workers the last kill hit have restarted: until
    then the port may have no listener at all (a bounded wait, not a measure of speed)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return _pids_answering(target, want)
        except TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _serve_with_worker_timeout(
    seconds: str, *, drain: bool = False
) -> tuple[subprocess.Popen[str], str]:
    return start_serve(
        "--plugin",
        "workerpacks",
        "--workers",
        "2",
        "--worker-timeout",
        seconds,
        "--no-incident-db",
        env=ENV,
        drain=drain,
    )


def _block_a_worker(target: str, timeout: float) -> None:
    """Block the event loop of the worker a fresh connection reaches (the call's own
    deadline ends it on the caller's side; a refused connection ends it at once)."""
    with (
        Client(target, options=OWN_CONNECTION) as client,
        contextlib.suppress(CapabilityPackError),
    ):
        client.invoke("worker.block", {"seconds": 600}, timeout=timeout)


def test_a_worker_with_a_blocked_loop_does_not_outlive_its_supervisor() -> None:
    """The drain a dead supervisor asks for needs the worker's event loop; a worker whose
    loop a pack blocks still ends, once the drain has had --grace + 10 s (it kept the
    port and hung calls until the pack returned)."""
    proc, target = start_serve(
        "--plugin", "workerpacks", "--workers", "2", "--grace", "1", "--no-incident-db", env=ENV
    )
    try:
        pids = _worker_pids(proc.banner)
        _block_a_worker(target, timeout=1)
        proc.kill()
        proc.wait(timeout=60)
        assert all(_gone(pid, within=90) for pid in pids), [_parent(p) for p in pids]
    finally:
        reap(proc)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_another_server_does_not_join_a_taken_port(two_workers: tuple, workers: str) -> None:
    """SO_REUSEPORT is for one supervisor's workers only: neither a plain ``packctl serve``
    nor a second ``serve --workers`` (another configuration, another incident store) may
    take a share of the port's connections; both fail to listen (exit 2)."""
    _, target, _ = two_workers
    other = subprocess.run(
        [*PACKCTL, "serve", "--address", target, "--workers", workers, "--plugin", "workerpacks"],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert other.returncode == 2, other.stderr
    assert "cannot listen on" in other.stderr and "serving" not in other.stderr


def test_workers_option_values() -> None:
    assert parse_workers("auto") == available_cores() == len(os.sched_getaffinity(0))
    assert parse_workers("3") == 3
    assert parse_workers(str(MAX_WORKERS)) == MAX_WORKERS
    for bad in ("0", "-1", "many", "", str(MAX_WORKERS + 1), "99999999999"):
        with pytest.raises(ValueError):
            parse_workers(bad)
    for option in (("--workers", "0"), ("--worker-timeout", "0.5"), ("--worker-timeout", "nan")):
        usage = subprocess.run(
            [*PACKCTL, "serve", *option],
            env=ENV,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert usage.returncode == 2, option
        assert option[0] in usage.stderr


def test_a_worker_that_is_not_serving_reads_worker_up_0() -> None:
    """A worker slot whose process is (re)starting is in the scrape as 0, not missing: an
    alert on ``capability_packs_worker_up == 0`` must fire for a worker stuck restarting."""
    supervisor = Supervisor(2, [sys.executable, "-c", "pass"], grace=1.0)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        supervisor._workers[0] = WorkerInfo(0, sleeper, time.monotonic())  # never ready
        families = list(WorkerMetricsCollector(supervisor).collect())
    finally:
        sleeper.kill()
        sleeper.wait()
    up = next(f for f in families if f.name == "capability_packs_worker_up")
    assert [(s.labels, s.value) for s in up.samples] == [({"worker": "0"}, 0.0)]


def test_the_merged_scrape_reads_every_worker_at_once() -> None:
    """One hung worker must not cost every other worker its scrape, nor the scrape N
    times the timeout: the workers are read side by side. Each worker's endpoint here
    answers only once all three requests have arrived, which read one by one never do."""
    arrived = threading.Barrier(3, timeout=30)

    class Metrics(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            try:
                arrived.wait()
            except threading.BrokenBarrierError:
                self.send_error(503)
                return
            body = b"# TYPE t_calls gauge\nt_calls 7.0\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    endpoint = ThreadingHTTPServer(("127.0.0.1", 0), Metrics)
    serving = threading.Thread(target=endpoint.serve_forever, daemon=True)
    serving.start()
    supervisor = Supervisor(3, [sys.executable, "-c", "pass"], grace=1.0)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for index in range(3):
            worker = WorkerInfo(index, sleeper, time.monotonic(), ready=True)
            worker.metrics_port = endpoint.server_address[1]
            supervisor._workers[index] = worker
        families = list(WorkerMetricsCollector(supervisor).collect())
    finally:
        arrived.abort()
        endpoint.shutdown()
        sleeper.kill()
        sleeper.wait()
    up = next(f for f in families if f.name == "capability_packs_worker_up")
    assert sorted((s.labels["worker"], s.value) for s in up.samples) == [
        ("0", 1.0),
        ("1", 1.0),
        ("2", 1.0),
    ]
    calls = next(f for f in families if f.name == "t_calls")
    assert sorted(s.labels["worker"] for s in calls.samples) == ["0", "1", "2"]


SLOW_ARGS = ("--plugin", "slowimport", "--no-incident-db", "--grace", "2")


def test_sigterm_while_workers_start_stops_without_waiting_for_them(tmp_path: Path) -> None:
    """The workers import a plugin that takes a minute; SIGTERM must not wait for it."""
    (tmp_path / "slowimport.py").write_text("import time\ntime.sleep(60)\n")
    env = dict(ENV)
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    env["CAPABILITY_PACKS_PLUGINS"] = "slowimport"
    proc = subprocess.Popen(
        tied([*PACKCTL, "serve", "--address", "127.0.0.1:0", "--workers", "2", *SLOW_ARGS]),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        children: list[int] = []
        while len(children) < 2 and time.monotonic() < deadline:  # both workers spawned
            children = [p for p in _all_pids() if _parent(p) == proc.pid]
            time.sleep(0.05)
        assert len(children) == 2
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=40)  # the import alone takes 60 s
    finally:
        reap(proc)
    assert "serving" not in err and "packctl: stopped" in err, err
    assert all(_gone(pid) for pid in children)


def _all_pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_taken_metrics_port_is_a_usage_error_not_a_traceback(workers: str) -> None:
    """``--metrics-port`` on a port someone holds: a plain ``packctl serve`` and a
    supervisor both refuse with a message naming the port (exit 2), before any worker is
    started, instead of a traceback (exit 1) after the workers served."""
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        run = subprocess.run(
            [
                *PACKCTL,
                "serve",
                "--address",
                "127.0.0.1:0",
                "--workers",
                workers,
                "--plugin",
                "workerpacks",
                "--metrics-port",
                str(port),
                "--metrics-host",
                "127.0.0.1",
            ],
            env=ENV,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert run.returncode == 2, run.stderr
    assert f"cannot serve metrics on 127.0.0.1:{port}" in run.stderr
    assert "Traceback" not in run.stderr and ") ready: " not in run.stderr


def _whoami_counts(url: str) -> dict[str, float]:
    """``invocations_total`` of ``worker.whoami`` ok, per ``worker`` label, merged scrape."""
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=30) as r:
        text = r.read().decode()
    counts: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if (
                sample.name == "capability_packs_invocations_total"
                and labels.get("pack") == "worker.whoami"
                and labels.get("code") == "ok"
            ):
                counts[labels["worker"]] = sample.value
    return counts


def test_a_replaced_workers_counters_continue_from_its_predecessors(two_workers: tuple) -> None:
    # Before: the merged scrape showed the replacement's own counts under the same
    # worker="0" series: 0 < N0 read as a reset only until the replacement had counted
    # more than its predecessor, after which Prometheus saw a plain increase and the old
    # worker's whole count was lost (here: the total went from T to T - N0 + k).
    proc, target, _ = two_workers
    first, second = _worker_pids(proc.banner)
    url = _metrics_url(proc.banner)
    answered = 0
    while True:
        pid = _whoami(target).result["pid"]
        answered += 1
        if pid == first and answered >= 4:
            break
    before = _whoami_counts(url)
    assert before["0"] >= 1 and sum(before.values()) == answered
    os.kill(first, signal.SIGKILL)
    for line in proc.stderr:  # the supervisor says when the replacement serves
        if "worker 0 restarted" in line:
            break
    later: set[int] = set()
    for _ in range(MAX_CONNECTIONS):
        try:
            later.add(_whoami(target).result["pid"])
        except CapabilityPackError:
            continue  # the connection reached the dying worker
        answered += 1
        if len(later - {first, second}) == 1:
            break
    after = _whoami_counts(url)
    assert after["0"] >= before["0"]  # the slot's counter did not go back
    assert sum(after.values()) == answered  # and nothing counted is lost


@pytest.mark.system
def test_workers_say_the_grants_as_the_single_server_does() -> None:
    """Issue 45 item 4: `serve --workers N` printed none of the grant lines docs/grants.md
    promises at start-up, and neither mode said the egress grants."""
    grants = ("--grant", "av.validate:fs.read=/srv/media", "--grant", "git.clone:egress=loopback")
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="packs.av_validate,packs.git,packs.http_fetch")
    lines = {}
    for mode in ((), ("--workers", "2")):
        proc, _ = start_serve("--no-incident-db", *grants, *mode, env=env, drain=True)
        lines[mode] = stop_serve(proc)
        assert proc.returncode == 0, lines[mode]
    for mode, err in lines.items():
        assert "packctl: av.validate reads /srv/media (docs/grants.md)" in err, (mode, err)
        assert "packctl: http.fetch egress public (docs/grants.md)" in err, (mode, err)
        assert re.search(r"packctl: git\.clone writes \S+; egress loopback \(docs", err), err
