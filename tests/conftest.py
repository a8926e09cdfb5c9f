"""Shared fixtures: the test plugin, an in-process registry, a real server with a Client."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import pytest
from server_support import ServerThread, load_test_packs, runtime_and_options

from control_plane._features.grpc.client import AsyncClient, Client
from control_plane._features.grpc.server import PackServer, create_server
from control_plane._kernel.invoke import Invoker
from control_plane._runtime.plugins import LoadResult

pytest_plugins = ("tiers",)


@pytest.fixture(autouse=True, scope="session")
def _incident_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Servers started by the tests (in-process or ``packctl serve``) never write to ~: the
    incident store and the state directory are the session's."""
    state = tmp_path_factory.mktemp("state")
    wanted = {
        "CAPABILITY_PACKS_INCIDENT_DB": str(state / "incidents.db"),
        # where serve and worker note the store they were started with
        "XDG_STATE_HOME": str(state / "xdg"),
    }
    saved = {key: os.environ.get(key) for key in wanted}
    os.environ.update(wanted)
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(autouse=True)
def _no_plugin_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests choose their plugins explicitly; an outer filter must not interfere."""
    monkeypatch.delenv("CAPABILITY_PACKS_PLUGINS", raising=False)


@pytest.fixture
def load() -> LoadResult:
    return load_test_packs()


@pytest.fixture
def invoker(load: LoadResult) -> Iterator[Invoker]:
    inv = Invoker(load.registry, classifiers=load.classifiers, max_workers=8)
    yield inv
    inv.close()


@pytest.fixture
def server() -> Iterator[ServerThread]:
    srv = ServerThread(load_test_packs(), max_workers=8).start()
    yield srv
    srv.stop()


@pytest.fixture
def client(server: ServerThread) -> Iterator[Client]:
    with Client(server.target) as c:
        yield c


@pytest.fixture
async def aio_server() -> AsyncIterator[PackServer]:
    """A server on the test's own event loop (for async tests)."""
    srv, _ = create_server("127.0.0.1:0", *runtime_and_options(load_test_packs(), max_workers=8))
    await srv.start()
    yield srv
    await srv.stop(0.5)
    srv.runtime.close()


@pytest.fixture
async def aio_client(aio_server: PackServer) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(f"127.0.0.1:{aio_server.port}") as c:
        yield c
