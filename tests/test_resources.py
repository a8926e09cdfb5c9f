"""No caller, pack or log consumer can hold, starve or freeze a real ``packctl serve``
(issue 34; docs/reliability.md, "The resource model").

Each test starts a real server (``--plugin resourcepacks``, tests/resourcepacks.py) and
attacks one class of resource from outside: the event loop (exceptions whose attributes
or texts are slow, a slow ``classify_exception`` hook, a sleeping or exiting event sink),
the output channels (an events FIFO whose reader stalls, a stderr pipe nobody drains),
the process (signals), the log (a forged line) and the journal (a planted symlink).
Bounds are generous (seconds where the healthy answer takes milliseconds).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from raw_wire import Received, decode_failure
from server_support import reap, subprocess_env
from slow_reader import SlowReader, rss_kib, wait_for
from test_cli import start_serve, stop_serve
from test_metrics import scrape, value

from control_plane._features.grpc.client import Client
from control_plane._features.grpc.connections import MAX_STREAMS
from control_plane._features.observability.events import SINK_QUEUE_EVENTS
from control_plane._features.observability.journal import IncidentJournal
from control_plane._kernel.errors import CapabilityPackError, UnknownPack
from control_plane._kernel.incidents import Incident
from control_plane.v1 import control_plane_pb2 as pb
from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system

#: What a well-behaved call may take while a hostile one holds its thread (seconds).
ANSWERED_WITHIN = 1.5
#: The hostile objects' sleep: what a call would wait if they ran on the loop.
HOSTILE_SECONDS = 3.0


def _env(**extra: str) -> dict[str, str]:
    return subprocess_env(CAPABILITY_PACKS_PLUGINS="testpacks,resourcepacks", **extra)


def _metrics_port(proc: subprocess.Popen[str]) -> int:
    banner = proc.banner  # type: ignore[attr-defined]
    match = re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", banner)
    assert match, banner
    return int(match.group(1))


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``packctl serve --plugin resourcepacks --metrics-port 0`` with stderr drained;
    ``request.param`` (when parametrized indirectly) is extra environment."""
    extra: dict[str, str] = getattr(request, "param", {})
    proc, target = start_serve(
        "--plugin",
        "resourcepacks",
        "--metrics-port",
        "0",
        "--no-incident-db",
        env=_env(**extra),
        drain=True,
    )
    try:
        yield proc, target
    finally:
        if proc.poll() is None:
            stop_serve(proc)
        reap(proc)


def _echo_latency(client: Client) -> float:
    started = time.monotonic()
    assert client.invoke("res.echo", {}, timeout=30).ok
    return time.monotonic() - started


def _code(client: Client, pack: str, doc: dict[str, object], timeout: float) -> str:
    """The code of a call that fails (every failure carries one)."""
    with pytest.raises(CapabilityPackError) as info:
        client.invoke(pack, doc, timeout=timeout)
    code = getattr(info.value, "code", None)
    assert isinstance(code, str) and code, info.value
    return code


MODES = ["response", "errno", "headers", "getattr", "str", "notes", "classify", "group"]


def test_a_hostile_exception_never_holds_the_event_loop(
    server: tuple[subprocess.Popen[str], str],
) -> None:
    """A sync pack raises an exception whose ``.response`` / ``.errno`` /
    ``headers.get`` / ``__getattr__`` / ``__str__`` / note sleeps, one a slow
    ``classify_exception`` hook sleeps on, and a 200,000-member ``ExceptionGroup``: while
    each is settled, an async neighbour is answered at once and the loop never stalls
    (on main each held every caller for seconds)."""
    proc, target = server
    with Client(target) as client, ThreadPoolExecutor(4) as pool:
        assert _echo_latency(client) < 10  # warm
        for mode in MODES:
            doc = {"mode": mode, "seconds": HOSTILE_SECONDS}
            hostile: Future[str] = pool.submit(_code, client, "res.raise", doc, 6.0)
            time.sleep(0.3)  # the handler raised; its exception is being settled
            latency = _echo_latency(client)
            assert latency < ANSWERED_WITHIN, (mode, latency)
            assert hostile.result(timeout=60)  # answered, with a code
        samples = scrape(_metrics_port(proc))
    longest = value(samples, "capability_packs_event_loop_longest_stall_seconds")
    print(f"longest event-loop stall over {len(MODES)} hostile exceptions: {longest:.3f}s")
    # Measured 0.06 s on a busy 2-core machine, 0.26 s at load 10 (ci10); a loop held by
    # any hostile object stalls HOSTILE_SECONDS (3 s): a third of that tells them apart.
    assert 0 < longest < HOSTILE_SECONDS / 3, samples


def test_the_stall_metric_sees_a_pack_that_holds_the_loop(
    server: tuple[subprocess.Popen[str], str],
) -> None:
    proc, target = server
    port = _metrics_port(proc)
    before = scrape(port)
    assert value(before, "capability_packs_event_loop_longest_stall_seconds") < 0.9
    with Client(target) as client:
        assert client.invoke("res.block", {"seconds": 1.2}, timeout=30).ok
        time.sleep(0.2)  # the monitor's next tick
    after = scrape(port)
    assert value(after, "capability_packs_event_loop_longest_stall_seconds") >= 1.0
    assert value(after, "capability_packs_event_loop_stalls_total") >= 1


@pytest.mark.parametrize(
    "server", [{"RESOURCEPACKS_SINK": "exit"}, {"RESOURCEPACKS_SINK": "sleep"}], indirect=True
)
def test_an_event_sink_neither_ends_nor_holds_the_server(
    server: tuple[subprocess.Popen[str], str],
) -> None:
    """A plugin's event sink raising ``SystemExit`` (on main: the server ended) or
    sleeping 3 s per event (on main: on the loop, every caller waited)."""
    proc, target = server
    with Client(target) as client:
        for _ in range(5):
            started = time.monotonic()
            assert _code(client, "res.raise", {"mode": "plain"}, 30) == "internal_error"
            assert time.monotonic() - started < ANSWERED_WITHIN
            assert _echo_latency(client) < ANSWERED_WITHIN
    assert proc.poll() is None


def test_an_events_fifo_whose_reader_stalls_does_not_stop_serving(tmp_path: Path) -> None:
    """``--events-file`` on a FIFO whose reader never reads (a hung disk or log shipper):
    on main the server stopped answering after ~160 events. Now every call is answered
    and the events past the queue are dropped and counted."""
    fifo = tmp_path / "events.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader that never reads
    proc, target = start_serve(
        "--plugin",
        "resourcepacks",
        "--events-file",
        str(fifo),
        "--metrics-port",
        "0",
        "--no-incident-db",
        env=_env(),
        drain=True,
    )
    try:
        with Client(target) as client:
            for i in range(1500):
                # 200 characters of two words: each event as long as a real traceback's
                # message, none costing the classifier's word scan of an 80-word text
                mode = f"{i:04d}" + "x" * 196
                code = _code(client, "res.raise", {"mode": mode}, 10)
                assert code == "internal_error"
            assert _echo_latency(client) < ANSWERED_WITHIN
            samples = scrape(_metrics_port(proc))
        # The FIFO took ~64 KiB, the sink's queue SINK_QUEUE_EVENTS; the rest was dropped.
        dropped = value(samples, "capability_packs_output_dropped_total", channel="events")
        assert dropped >= 1500 - SINK_QUEUE_EVENTS - 200, samples
    finally:
        proc.kill()
        proc.wait(30)
        os.close(reader)
        reap(proc)


def test_stderr_nobody_drains_does_not_stop_serving() -> None:
    """A stderr pipe nobody reads after the banner: on main the server stopped answering
    after ~110 refused calls (every refusal logs and emits an event to stderr). Now the
    log and event lines past their queues are dropped and counted."""
    proc, target = start_serve(
        "--plugin", "resourcepacks", "--metrics-port", "0", "--no-incident-db", env=_env()
    )  # stderr: a pipe this test never reads again
    try:
        name = "no.such." + "x" * 200
        with Client(target) as client:
            for _ in range(3000):
                with pytest.raises(UnknownPack):  # a rejection reason, not a timeout
                    client.invoke(name, {}, timeout=10)
            assert _echo_latency(client) < ANSWERED_WITHIN
            samples = scrape(_metrics_port(proc))
        dropped = value(samples, "capability_packs_output_dropped_total", channel="events")
        dropped += value(samples, "capability_packs_output_dropped_total", channel="log")
        assert dropped > 0, samples
    finally:
        proc.kill()
        proc.wait(30)
        reap(proc)


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2])
def test_stray_signals_do_not_kill_calls_in_flight(signum: int) -> None:
    proc, target = start_serve("--plugin", "testpacks", drain=True)
    try:
        with Client(target) as client, ThreadPoolExecutor(1) as pool:
            slow = pool.submit(client.invoke, "test.slow", {"seconds": 1.5, "tag": "t"}, timeout=30)
            time.sleep(0.5)
            proc.send_signal(signum)
            assert slow.result(timeout=30).result == {"done": "t"}
            assert client.invoke("test.echo", {}, timeout=10).ok
        assert proc.poll() is None
        err = stop_serve(proc)
        assert f"ignored signal {signal.Signals(signum).name}" in err
    finally:
        reap(proc)


def test_kv_log_lines_cannot_be_forged() -> None:
    """A refused pack name with a newline (or a Unicode line separator) stays inside its
    own ``key=value`` line."""
    proc, target = start_serve(
        "--plugin", "testpacks", "--log-format", "kv", "--log-level", "debug", drain=True
    )
    forged = "level=critical msg=FORGED"
    try:
        with Client(target) as client:
            for sep in ("\n", "\r", "\u2028", "\x85"):
                with pytest.raises(CapabilityPackError):
                    client.invoke(f"evil{sep}{forged}", {}, timeout=10)
        err = stop_serve(proc)
    finally:
        reap(proc)
    lines = re.split(r"[\n\r\u2028\u2029\x85]", err)
    assert not [line for line in lines if line.startswith(forged)], err
    assert "evil" in err  # the refusal was logged, its name escaped


def test_the_journal_refuses_a_planted_symlink(tmp_path: Path) -> None:
    """The per-process journal beside the database is created afresh: a symlink planted
    at its name (pointing at a file the server may write) is never followed."""
    db = tmp_path / "incidents.db"
    target = tmp_path / "victim.txt"
    target.write_text("precious\n")
    nxt = next(IncidentJournal._instances)
    for n in range(nxt + 1, nxt + 4):
        (tmp_path / f"{db.name}.pending-{os.getpid()}-{n}.jsonl").symlink_to(target)
    journal = IncidentJournal(db)
    try:
        assert not journal.path.is_symlink()
        journal.append(Incident("ref_1", "p", "r", "k", "s", "tb", time.time()))
    finally:
        journal.close(remove=False)
    assert target.read_text() == "precious\n"
    assert "ref_1" in journal.path.read_text()


# -- connections: slow readers and bursts ---------------------------------------------------


def _slow_reader_calls(target: str, calls: int, size: int) -> SlowReader:
    host, port = target.rsplit(":", 1)
    reader = SlowReader(host, int(port), ignore_limit=True)
    message = pb.InvokePackRequest(
        pack="test.big", input=b'{"size": %d}' % size
    ).SerializeToString()
    for _ in range(calls):
        reader.call("InvokePack", message)
    return reader


def test_a_reader_that_never_reads_pins_bounded_memory() -> None:
    """A raw HTTP/2 client whose streams' windows stay 0 sends 1,000 calls of 100 KB
    answers on one connection, ignoring the server's stream limit, and answers PINGs:
    on main the server held every answer (RSS +300 MiB and more, until the client left).
    Now at most ``MAX_STREAMS`` calls are open on the connection, the rest are refused,
    and the server keeps answering others."""
    proc, target = start_serve("--plugin", "testpacks", drain=True)
    try:
        with Client(target) as client:
            assert client.invoke("test.echo", {}, timeout=10).ok
        time.sleep(0.5)
        before = rss_kib(proc.pid)
        reader = _slow_reader_calls(target, 1000, 100_000)
        try:
            assert wait_for(lambda: reader.count("open") <= MAX_STREAMS, 30)
            time.sleep(3)  # every call answered that will be
            grown = (rss_kib(proc.pid) - before) / 1024
            assert grown < 100, f"RSS grew by {grown:.0f} MiB"
            assert reader.count("open") <= MAX_STREAMS
            assert reader.count("reset") >= 1000 - MAX_STREAMS - 50
            with Client(target) as client:
                assert client.invoke("test.echo", {}, timeout=10).ok
        finally:
            reader.close()
    finally:
        stop_serve(proc)
        reap(proc)


def test_a_connection_held_by_a_slow_reader_is_closed_after_its_age() -> None:
    """The send deadline: a connection past its age and grace is closed, and what its
    unread answers held with it (``--grpc-option`` shortens both for the test)."""
    proc, target = start_serve(
        "--plugin",
        "testpacks",
        "--grpc-option",
        "grpc.max_connection_age_ms=1000",
        "--grpc-option",
        "grpc.max_connection_age_grace_ms=1000",
        drain=True,
    )
    try:
        reader = _slow_reader_calls(target, 20, 100_000)
        try:
            assert wait_for(lambda: reader.eof, 30), reader.streams
            assert reader.goaway
        finally:
            reader.close()
    finally:
        stop_serve(proc)
        reap(proc)


def test_a_callers_deadline_is_the_send_deadline_of_its_unread_answers() -> None:
    """A reader that never reads but sends ``grpc-timeout: 2S``: grpc core drops each
    answer it still holds at the call's deadline (trailers ``DEADLINE_EXCEEDED``, which
    flow control does not hold back) and the connection stays open. A call without a
    deadline is held until the connection's age (the test above). A guard of what
    docs/reliability.md states (this held on main too)."""
    proc, target = start_serve("--plugin", "testpacks", drain=True)
    try:
        host, port = target.rsplit(":", 1)
        reader = SlowReader(host, int(port))
        message = pb.InvokePackRequest(pack="test.big", input=b'{"size": 100000}')
        try:
            for _ in range(20):
                reader.call("InvokePack", message.SerializeToString(), timeout="2S")
            assert wait_for(lambda: reader.count("closed") == 20, 30), reader.streams
            statuses = {dict(h).get(b"grpc-status") for h in reader.headers.values()}
            assert statuses == {b"4"}, reader.headers  # DEADLINE_EXCEEDED, no answer sent
            assert not reader.goaway and not reader.eof
        finally:
            reader.close()
    finally:
        stop_serve(proc)
        reap(proc)


async def _burst(target: str, calls: int) -> list[grpc.StatusCode | str]:
    """``calls`` concurrent calls on one channel: each one's status, or ``ok``/a reason."""
    async with grpc.aio.insecure_channel(target) as channel:
        stub = pb_grpc.ControlPlaneServiceStub(channel)
        request = pb.InvokePackRequest(pack="test.sync_echo", input=b"{}")

        async def one() -> grpc.StatusCode | str:
            try:
                await stub.InvokePack(request, timeout=120)
            except grpc.aio.AioRpcError as err:
                received = Received(err.code())
                decode_failure(received, err)
                if received.error_info is None:  # a bare status: no code, no reason
                    return err.code()
                return received.error_info.reason
            return "ok"

        return await asyncio.gather(*(one() for _ in range(calls)))


def test_a_burst_on_one_channel_gets_answers_not_bare_statuses() -> None:
    """6,000 concurrent calls on one channel: on main ~2,500 got a bare ``CANCELLED``
    from grpc core (its pending-request limits) -- no ErrorInfo, no event. Now every call
    is answered, or refused with a reason."""
    proc, target = start_serve("--plugin", "testpacks", drain=True)
    try:
        answers = Counter(asyncio.run(_burst(target, 6000)))
    finally:
        stop_serve(proc)
        reap(proc)
    bare = {k: n for k, n in answers.items() if isinstance(k, grpc.StatusCode)}
    assert not bare, answers
    assert answers["ok"] > 0, answers


def test_cancellation_reaches_a_sync_packs_ctx(
    server: tuple[subprocess.Popen[str], str],
) -> None:
    """8 calls (the pack's share of the default pool) to a sync pack that polls
    ``ctx.cancelled``: 4 cancelled by their caller, 4 past their deadline. Each handler
    sees the cancellation and returns, so its thread is free again; twice, so the second
    round runs on the threads the first gave back (a guard: this held on main too)."""
    _, target = server
    channel = grpc.insecure_channel(target)
    try:
        stub = pb_grpc.ControlPlaneServiceStub(channel)
        request = pb.InvokePackRequest(pack="res.wait_cancel", input=b"{}")
        with Client(target) as client:
            for seen in (8, 16):
                futures = [stub.InvokePack.future(request, timeout=60) for _ in range(4)]
                expired = [stub.InvokePack.future(request, timeout=1.0) for _ in range(4)]
                time.sleep(0.5)
                for future in futures:
                    future.cancel()
                assert wait_for(
                    lambda seen=seen: (
                        client.invoke("res.seen", {}, timeout=10).result == {"seen": seen}
                    ),
                    15,
                ), client.invoke("res.seen", {}, timeout=10).result
                for future in expired:
                    with pytest.raises(grpc.RpcError):
                        future.result(timeout=10)
    finally:
        channel.close()
