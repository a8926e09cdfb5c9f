"""A hostile pack against a real ``packctl serve --isolate`` (issue 42, item 0).

``escape_pack.py`` declares the least reach (no files, no egress, no credentials) and tries
every way out of its worker: a fork server to fork it an unconfined child, TCP to loopback,
an abstract unix socket of someone else's, the control plane's environment, a signal to the
control plane, and its own code at import (before confinement, in the control plane). Each
test asserts the attempt failed, and that the server still serves.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import shutil
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from raw_wire import Received, Serve, call_raw, serve_env

from control_plane._features.grants.confine import kernel_support
from control_plane.v1 import control_plane_pb2 as pb

pytestmark = pytest.mark.system

PACK = "escape.probe"
UNDECLARED = "escape.undeclared"
TOKEN = "iso42-bearer-4a1e0c7f9d2b"
TOKEN_ENV = "ESCAPE_TEST_TOKENS"
HERE = Path(__file__).resolve().parent


class Escape:
    """The server, the hostile pack's directory and what it must not reach."""

    def __init__(self, root: Path) -> None:
        self.plugin_dir = root / "plugin"
        self.marks = root / "marks"
        self.operator_file = root / "operator" / "secret.txt"
        for directory in (self.plugin_dir, self.marks, self.operator_file.parent):
            directory.mkdir(parents=True)
        self.operator_file.write_text("the operator's secret\n")
        shutil.copy(HERE / "escape_pack.py", self.plugin_dir / "escape_pack.py")
        settings = {"operator_file": str(self.operator_file), "marks": str(self.marks)}
        (self.plugin_dir / "escape_settings.py").write_text(f"SETTINGS = {settings!r}\n")
        env = serve_env(
            root / "incidents.db", CAPABILITY_PACKS_PLUGINS="escape_pack", **{TOKEN_ENV: TOKEN}
        )
        self.server = Serve(
            root / "incidents.db",
            "--isolate",
            PACK,
            "--isolation-workers",
            "1",
            "--auth-token-env",
            TOKEN_ENV,
            env=env,
            plugin=str(self.plugin_dir / "escape_pack.py"),
        )

    @property
    def pid(self) -> int:
        return self.server.proc.pid

    def call(self, doc: dict[str, Any], timeout: float = 30, pack: str = PACK) -> Received:
        request = pb.InvokePackRequest(pack=pack, input=json.dumps(doc).encode())
        return call_raw(
            self.server.channel,
            "InvokePack",
            request.SerializeToString(),
            timeout=timeout,
            metadata=(("authorization", f"Bearer {TOKEN}"),),
        )

    def result(self, doc: dict[str, Any], pack: str = PACK) -> dict[str, Any]:
        got = self.call(doc, pack=pack)
        assert got.code == "ok", (got.code, got.message, "".join(self.server.stderr))
        assert isinstance(got.result, dict)
        return got.result


@pytest.fixture(scope="module")
def escape(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Escape]:
    if kernel_support()[0] < 6:
        pytest.skip(f"needs Landlock ABI 6 or later: {kernel_support()[1]}")
    found = Escape(tmp_path_factory.mktemp("escape"))
    try:
        yield found
    finally:
        found.server.stop()
        found.server.kill()


def test_no_fork_server_forks_the_pack_an_unconfined_child(escape: Escape, tmp_path: Path) -> None:
    marker = tmp_path / "forked"
    got = escape.result({"mode": "fork_server", "marker": str(marker), "pid": escape.pid})
    time.sleep(1.0)  # a forked child would have written by now
    assert not marker.exists(), (marker.read_text(), got)
    assert escape.server.alive()


def test_no_tcp_to_loopback_without_egress(escape: Escape) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        got = escape.result({"mode": "tcp", "port": listener.getsockname()[1]})
    assert got["connected"] is False, got


def test_no_udp_to_loopback_without_egress(escape: Escape) -> None:
    """Landlock restricts TCP only: a pack granted no egress makes no network socket."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.settimeout(1.0)
        got = escape.result({"mode": "udp", "port": listener.getsockname()[1]})
        with pytest.raises(TimeoutError):
            listener.recv(64)
    assert got["sent"] is False, got


def test_no_abstract_unix_socket_outside_its_domain(escape: Escape) -> None:
    name = f"iso42-escape-{time.monotonic_ns()}"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("\0" + name)
        listener.listen()
        got = escape.result({"mode": "abstract", "name": name})
    assert got["connected"] is False, got


def test_neither_the_control_planes_environ_nor_its_environment(escape: Escape) -> None:
    got = escape.result({"mode": "environ", "pid": escape.pid, "token": TOKEN})
    assert got["read_theirs"] is False, got
    assert got["token_in_ours"] is False, got
    # credentials=none: an environment built for it, not ours minus a few names.
    assert set(got["names_in_ours"]) <= {"PATH", "TZ", "LANG", "TMPDIR", "HOME", "XDG_CONFIG_HOME"}


def test_a_pack_declaring_nothing_is_isolated_with_its_module_and_sees_no_other_process(
    escape: Escape,
) -> None:
    """escape.undeclared is not named by --isolate: its module is, so it runs isolated too;
    declaring no reach, it keeps files and network, not the control plane's process."""
    got = escape.result({"mode": "environ", "pid": escape.pid, "token": TOKEN}, UNDECLARED)
    assert got["read_theirs"] is False, got
    assert got["token_in_ours"] is False, got  # ambient credentials: ours, minus our tokens
    killed = escape.result({"mode": "kill", "pid": escape.pid}, UNDECLARED)
    assert killed["sent"] is False, killed
    assert escape.server.alive()


def test_no_system_v_shared_memory_of_another_process(escape: Escape) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    secret = b"iso42 shared secret"
    shmid = libc.shmget(0, 4096, 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT, ours only
    assert shmid >= 0, ctypes.get_errno()
    try:
        address = libc.shmat(shmid, None, 0)
        ctypes.memmove(address, secret, len(secret))
        libc.shmdt(ctypes.c_void_p(address))
        got = escape.result({"mode": "sysv", "shmid": shmid, "size": len(secret)})
    finally:
        libc.shmctl(shmid, 0, None)  # IPC_RMID
    assert got["attached"] is False, got


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the raw clone is x86_64's")
def test_no_namespace_of_its_own(escape: Escape) -> None:
    """A user namespace would give the pack capabilities inside it (and the kernel's surface
    behind them): refused to the worker and its children, by unshare and by clone."""
    got = escape.result({"mode": "namespace"})
    assert got == {"unshare": False, "clone": False}, got


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the probes' numbers are x86_64's")
@pytest.mark.parametrize("pack", [PACK, UNDECLARED])
def test_no_capability_even_when_the_server_runs_as_root(escape: Escape, pack: str) -> None:
    """Landlock and seccomp do not hold a capability's own system calls: a worker of a server
    run as root kept every capability (here CapEff 0x1fffeffffff: rebooting the host,
    setting its clock, loading a module, mknod of a disk in a granted directory). It holds
    none, and its bounding set is empty, so no program it runs regains one."""
    got = escape.result({"mode": "capabilities"}, pack)
    assert got["sets"] == {"CapInh": 0, "CapPrm": 0, "CapEff": 0, "CapBnd": 0, "CapAmb": 0}, got
    assert got["probes"] == {"reboot": "EPERM", "settime": "EPERM"}, got


@pytest.mark.parametrize("pack", [PACK, UNDECLARED])
def test_the_out_of_memory_killer_takes_a_worker_first(escape: Escape, pack: str) -> None:
    """Its RLIMIT_AS bounds one process, not the children it forks (each has its own): the
    kernel's OOM killer must choose the worker's family before the control plane, and the
    pack cannot change that (lowering it needs CAP_SYS_RESOURCE)."""
    got = escape.result({"mode": "capabilities"}, pack)
    assert (got["oom_score_adj"], got["lowered"]) == (1000, False), got


def test_no_signal_to_the_control_plane(escape: Escape) -> None:
    got = escape.result({"mode": "kill", "pid": escape.pid})
    assert got["sent"] is False, got
    time.sleep(0.5)
    assert escape.server.alive()
    assert escape.call({"mode": "import"}).code == "ok"


def test_its_code_runs_confined_from_its_first_line_and_never_in_the_control_plane(
    escape: Escape,
) -> None:
    got = escape.result({"mode": "import"})
    # Nowhere did its import leave a mark: the control plane never imported it (its
    # declaration came from a confined worker, as data), and its worker could not write
    # outside its grant.
    marks = {p.name: p.read_text() for p in escape.marks.iterdir()}
    assert f"imported-{escape.pid}" not in marks, marks
    assert f"imported-{got['pid']}" not in marks, marks
    # (escape.undeclared's worker, unconfined files, may leave one: never the server's.)
    assert not any("control_plane._features.cli.cli" in line for line in marks.values()), marks
    # At import, in its worker: confinement came first, and replacing the confinement
    # functions then changes nothing.
    assert got["imported"]["pid"] == got["pid"]
    assert got["imported"]["operator_file"] is None, got
    assert got["operator_file_now"] is None, got


PLAIN_PLUGIN = """
from control_plane import Pack, Reach, hookimpl


def plain(doc, ctx):
    return {}


class Plugin:
    @hookimpl
    def register_packs(self, register):
        register(Pack("plain.pack", "1.0.0", "Plain.", {"type": "object"},
                      {"type": "object", "properties": {}}, plain,
                      codes={"internal_error": None},
                      reach=Reach()))  # declared: it loads here (undeclared, it is isolated)


Plugin = Plugin()
"""


def test_an_entry_point_holding_an_isolated_pack_is_never_imported_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed plugins (the ``capability_packs`` entry points) are described as well: the
    one holding the isolated pack is never imported in this process; another loads here."""
    from control_plane._runtime.runtime import RuntimeConfig, build_runtime

    site = tmp_path / "site"
    marks = tmp_path / "marks"
    for directory in (site, marks):
        directory.mkdir()
    shutil.copy(HERE / "escape_pack.py", site / "escape_pack_ep.py")
    settings = {"operator_file": str(tmp_path / "absent"), "marks": str(marks)}
    (site / "escape_settings.py").write_text(f"SETTINGS = {settings!r}\n")
    dist = site / "iso42_escape-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: iso42-escape\nVersion: 1.0\n")
    (site / "plain_ep.py").write_text(PLAIN_PLUGIN)
    (dist / "entry_points.txt").write_text(
        "[capability_packs]\nescape = escape_pack_ep\nplain = plain_ep:Plugin\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delenv("CAPABILITY_PACKS_PLUGINS", raising=False)
    config = RuntimeConfig(builtins=False, isolate=(PACK,), isolation_workers=1)
    with build_runtime(config) as runtime:
        assert {PACK, UNDECLARED} <= runtime.isolated
        assert runtime.registry.get(PACK) is not None
        assert runtime.registry.get(PACK).plugin == "escape"  # type: ignore[union-attr]
        assert "plain.pack" not in runtime.isolated  # loaded here, as before
        assert runtime.registry.get("plain.pack").plugin == "plain"  # type: ignore[union-attr]
    assert "plain_ep" in sys.modules
    assert "escape_pack_ep" not in sys.modules
    assert not any(p.name == f"imported-{os.getpid()}" for p in marks.iterdir())
