"""Pack isolation against the real server: exit, segfault, abort, leak and hang in workers.

Every fault is provoked while background traffic (in-process and isolated packs) keeps
flowing; each test asserts that traffic never failed and that the pool replaced its
worker.
"""

from __future__ import annotations

import json
import os
import pickle
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from reliability_support import Background, load_fault_packs
from server_support import ServerThread
from tiers import starts_processes

from control_plane import Pack, PackError
from control_plane._features.grpc.client import (
    Client,
    InternalError,
    NetworkError,
    RateLimited,
    Timeout,
)
from control_plane._features.isolation.isolation import Isolation, IsolationError, Locator, locate
from control_plane._features.isolation.worker_failures import (
    RemoteError,
    freeze_exception,
    thaw_exception,
)
from control_plane._features.libraries import grpc as grpc_classifier
from control_plane._kernel.outcome import INTERNAL_MESSAGE
from control_plane._runtime.plugins import load_registry

MEMORY_LIMIT = 512 * 1024 * 1024
BACKGROUND = [("test.echo", {"n": 1}), ("test.sync_echo", {"n": 2}), ("fault.ok", {"n": 3})]


@pytest.fixture(scope="module")
@starts_processes
def server() -> Iterator[ServerThread]:
    srv = ServerThread(
        load_fault_packs(),
        max_workers=8,
        isolate=["fault.crash"],
        isolation_workers=2,
        isolation_memory_limit=MEMORY_LIMIT,
    ).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def client(server: ServerThread) -> Iterator[Client]:
    with Client(server.target) as c:
        yield c


def pool(server: ServerThread, name: str = "fault.crash") -> Any:
    assert server.server is not None
    isolation = server.server.invoker.isolation
    assert isolation is not None
    return isolation.pools[name]


def test_isolated_packs_run_in_other_processes(server: ServerThread, client: Client) -> None:
    # fault.crash by --isolate, fault.ok by Pack(isolated=True); test.echo stays in-process.
    crash_pid = client.invoke("fault.crash", {"mode": "ok"}, timeout=10).result["pid"]
    ok_pid = client.invoke("fault.ok", {}, timeout=10).result["pid"]
    assert {crash_pid, ok_pid}.isdisjoint({os.getpid()})
    assert crash_pid in pool(server).pids()
    assert ok_pid in pool(server, "fault.ok").pids()
    assert server.server is not None
    isolation = server.server.invoker.isolation
    assert isolation is not None and "test.echo" not in isolation


@pytest.mark.parametrize(
    ("mode", "how"), [("exit", "exit status 3"), ("segv", "SIGSEGV"), ("abort", "SIGABRT")]
)
def test_crash_is_internal_error_and_worker_is_replaced(
    server: ServerThread, client: Client, mode: str, how: str
) -> None:
    crashes, started = pool(server).stats.crashes, pool(server).stats.started
    with Background(server.target, BACKGROUND) as background:
        time.sleep(0.1)
        with pytest.raises(InternalError) as caught:
            client.invoke("fault.crash", {"mode": mode}, timeout=10)
        time.sleep(0.1)
    background.assert_unaffected()
    error = caught.value
    assert error.message == INTERNAL_MESSAGE
    assert error.reference_id
    assert server.server is not None
    incident = server.server.invoker.incidents.get(error.reference_id)
    assert incident is not None
    assert "died before answering" in incident.traceback and how in incident.traceback
    assert pool(server).stats.crashes == crashes + 1
    assert pool(server).stats.started == started + 1
    # the replacement serves the next call
    assert client.invoke("fault.crash", {"mode": "ok"}, timeout=10).result["pid"] > 0
    assert len(pool(server).pids()) == 2


def test_crashes_in_a_row_never_reach_a_dead_worker(client: Client) -> None:
    for _ in range(4):
        with pytest.raises(InternalError):
            client.invoke("fault.crash", {"mode": "exit"}, timeout=10)
        assert client.invoke("fault.crash", {"mode": "ok"}, timeout=10).ok


def test_hang_times_out_at_the_deadline_and_worker_is_killed(
    server: ServerThread, client: Client
) -> None:
    timeouts = pool(server).stats.timeouts
    with Background(server.target, BACKGROUND) as background:
        started = time.monotonic()
        with pytest.raises(Timeout) as caught:
            client.invoke("fault.crash", {"mode": "hang"}, timeout=1.0)
        elapsed = time.monotonic() - started
    background.assert_unaffected()
    assert 0.7 < elapsed < 2.0
    assert caught.value.code == "timeout"
    assert caught.value.envelope.origin == "control_plane"  # the server's, not the client's
    assert pool(server).stats.timeouts == timeouts + 1
    assert client.invoke("fault.crash", {"mode": "ok"}, timeout=10).ok


def test_memory_leak_past_the_limit_is_internal_error(server: ServerThread, client: Client) -> None:
    retired = pool(server).stats.retired
    with (
        Background(server.target, BACKGROUND) as background,
        pytest.raises(InternalError) as caught,
    ):
        client.invoke("fault.crash", {"mode": "leak"}, timeout=20)
    background.assert_unaffected()
    assert server.server is not None
    incident = server.server.invoker.incidents.get(caught.value.reference_id or "")
    assert incident is not None and "MemoryError" in incident.traceback
    assert "traceback in isolated worker" in incident.traceback
    assert pool(server).stats.retired == retired + 1
    assert client.invoke("fault.crash", {"mode": "ok"}, timeout=10).ok


def test_errors_are_classified_across_the_process_boundary(client: Client) -> None:
    with pytest.raises(RateLimited) as limited:
        client.invoke("fault.crash", {"mode": "typed"}, timeout=10)
    assert limited.value.retry_after == 1.5
    with pytest.raises(NetworkError) as network:
        client.invoke("fault.crash", {"mode": "raise"}, timeout=10)
    assert "hunter2" not in network.value.message


def test_concurrent_calls_beyond_the_pool_wait_for_a_worker(client: Client) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as ex:
        results = list(ex.map(lambda i: client.invoke("fault.ok", {"i": i}, timeout=10), range(24)))
    assert [r.result["echo"]["i"] for r in results] == list(range(24))


def test_exception_chain_survives_the_trip() -> None:
    try:
        try:
            raise ConnectionResetError(104, "reset by peer")
        except ConnectionResetError as inner:
            raise PackError("rate_limited", "slow_down", retry_after=2.0) from inner
    except PackError as exc:
        data = freeze_exception(exc)
    json.loads(data)  # data only: JSON, never a pickle
    back = thaw_exception(data, pid=1)
    assert isinstance(back, RemoteError) and back.type_name == "PackError"
    cls = back.classification
    assert cls is not None
    assert (cls.code, cls.message, cls.retry_after) == ("rate_limited", "slow_down", 2.0)
    assert isinstance(back.__cause__, RemoteError)
    assert back.__cause__.type_name == "ConnectionResetError"
    assert "reset by peer" in str(back.__cause__)
    assert any("traceback in isolated worker (pid 1)" in note for note in back.__notes__)


class _LiveRpcError(grpc.RpcError):
    """A gRPC error whose status only its live call answers (``code()``, ``details()``)."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAUTHENTICATED

    def details(self) -> str:
        return "token expired"

    def trailing_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()


def test_a_grpc_errors_status_is_recorded_as_data_in_the_worker() -> None:
    """The worker records a live gRPC error's status on it (the libraries feature's
    ``mark_status``) before classifying, and the grpc plugin's answer crosses as data."""
    try:
        try:
            raise _LiveRpcError("call failed")
        except grpc.RpcError as inner:
            raise RuntimeError("downstream") from inner
    except RuntimeError as exc:
        outer = exc
    back = thaw_exception(freeze_exception(outer), pid=1)
    recorded = getattr(outer.__cause__, grpc_classifier.FACTS_ATTR, None)
    assert recorded == ("UNAUTHENTICATED", "token expired", None)
    cls = back.classification
    assert cls is not None
    assert (cls.code, cls.rule) == ("auth_failed", "grpc:UNAUTHENTICATED"), cls


def test_unclassified_exception_becomes_remote_error() -> None:
    class Local(Exception):
        pass

    back = thaw_exception(freeze_exception(Local("odd")))
    assert type(back).__name__ == "RemoteError"
    assert back.classification is None
    assert "odd" in str(back)
    assert pickle.loads(pickle.dumps(Locator("p", "m", "f"))) == Locator("p", "m", "f")


def test_malformed_failure_data_is_a_remote_error() -> None:
    for data in (b"\x80not json", b"[]", b'{"chain": "x", "classification": {"code": 3}}'):
        back = thaw_exception(data)
        assert isinstance(back, RemoteError)
        assert back.classification is None


def test_handler_that_cannot_be_imported_is_refused_at_startup() -> None:
    def local_handler(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {}

    schema = {
        "type": "object",
        "properties": {"error": {"properties": {"code": {"enum": ["timeout"]}}}},
    }
    pack = Pack("local.pack", "1.0.0", "x", {"type": "object"}, schema, local_handler)
    with pytest.raises(IsolationError, match="cannot be imported by a worker"):
        locate(pack.name, pack.handler, "<direct>")


def test_unknown_pack_in_isolate_is_refused() -> None:
    load = load_registry(builtins=False, entry_points_=False, extra=[])
    with pytest.raises(IsolationError, match="unknown pack"):
        Isolation.for_registry(load.registry, ["no.such.pack"])


def test_a_mistyped_pack_in_isolate_says_which_pack_was_meant() -> None:
    load = load_registry(builtins=True, entry_points_=False, extra=[])
    try:
        with pytest.raises(IsolationError, match=r"av\.validat \(did you mean av\.validate\?\)"):
            Isolation.for_registry(load.registry, ["av.validat"])
    finally:
        load.close()


def test_a_workers_boot_path_adds_what_the_sites_pth_files_added_after_the_stdlib(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """A venv that reaches packages through ``.pth`` files: the directories the control
    plane started with follow the standard library in a worker's boot path; never the
    working directory, a relative or empty entry, nor what was put on the path later
    (a ``--plugin`` module's directory)."""
    from control_plane._features.isolation import isolation

    added = tmp_path / "outer-site-packages"
    added.mkdir()
    later = tmp_path / "plugins"
    later.mkdir()
    monkeypatch.chdir(tmp_path)
    started = ("", str(tmp_path), "relative", str(added), str(tmp_path / "gone"))
    monkeypatch.setattr(isolation, "_STARTED_PATH", started)
    monkeypatch.syspath_prepend(str(later))
    front, _, tail = isolation._boot_path().partition("\n")
    # the project's root: control_plane/_features/isolation/isolation.py under it
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(isolation.__file__))))
    assert front.split(os.pathsep)[0] == root
    assert tail.split(os.pathsep) == [str(added)]
    assert str(later) not in front + tail
