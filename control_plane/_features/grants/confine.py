"""Kernel confinement of an isolation worker, applied before any of its pack's code runs:
no-new-privs, no capability, and Landlock (filesystem, TCP, abstract unix sockets, signals).

The Landlock ruleset is built by :class:`~.confine_program.Ruleset` (the one place that
calls Landlock; a pack's programs are confined with it too), every right the kernel's ABI
knows:

- filesystem (ABI 1-5): the system's and the interpreter's files read and executed, the
  pack's reads and writes as granted; nothing else;
- TCP (ABI 4): a pack granted no egress can neither connect nor bind a TCP port;
- scopes (ABI 6): no connecting to an abstract unix socket made outside the worker's
  domain, no signal to a process outside it (the control plane, its other workers);
- any Landlock domain also keeps ``ptrace`` and ``/proc/PID/{environ,mem,...}`` of
  processes outside it out of reach.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.machinery
import itertools
import os
import platform
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from control_plane._features.grants import confine_program as landlock
from control_plane._kernel.reach import PackReach
from control_plane._resources import schemas_dir

__all__ = [
    "PROC_READ",
    "SYSTEM_READ",
    "Confinement",
    "ImportPaths",
    "confine",
    "import_paths",
    "kernel_support",
]

#: System paths every worker may read and execute (those that exist).
SYSTEM_READ = (*landlock.SYSTEM_BASE, "/opt")
#: What a worker may read of ``/proc`` beside its own ``/proc/PID``: nothing of another
#: process (``/proc/net/unix`` lists every socket of the host, ``/proc/PID/environ`` of the
#: control plane is its whole environment; Landlock's ptrace rule does not cover reading them).
PROC_READ = (
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/version",
    "/proc/filesystems",
    "/proc/sys/kernel/random",
    "/proc/sys/vm/overcommit_memory",
)


def kernel_support() -> tuple[int, str]:
    """The Landlock ABI this kernel offers (0: none) and a sentence saying so."""
    if not sys.platform.startswith("linux"):
        return 0, "Landlock is Linux's: isolated packs are held by ctx.reach only"
    abi, why = landlock.probe()
    if abi <= 0:
        return 0, (
            f"this kernel ({platform.release()}) offers no Landlock ({why}): "
            "isolated packs are held by no-new-privs and ctx.reach only"
        )
    held = ["files"]
    if abi >= 4:
        held.append("TCP")
    if abi >= 6:
        held.append("abstract unix sockets and signals")
    return abi, (
        "isolated packs run in fresh worker processes confined before their code runs: "
        f"Landlock ABI {abi} ({', '.join(held)}), seccomp (sockets), an environment of "
        "their own"
    )


@dataclass(frozen=True, slots=True)
class Confinement:
    """What :func:`confine` applied (the worker reports it; the control plane logs it)."""

    abi: int
    files: bool
    tcp: bool
    scoped: bool
    #: The sockets it may make (seccomp): ``none``, ``unix only``, ``no unix``, ``unix and
    #: IP`` or ``any``.
    sockets: str = "any"

    def to_data(self) -> dict[str, object]:
        return {
            "abi": self.abi,
            "files": self.files,
            "tcp": self.tcp,
            "scoped": self.scoped,
            "sockets": self.sockets,
        }


_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_EINVAL = 22


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def _drop_capabilities() -> None:
    """Hold no capability, and let no program started from here regain one: a server run as
    root would otherwise hand each worker all of its own (rebooting the host, setting its
    clock, loading a kernel module, ``mknod`` of a disk in a granted directory), which
    neither Landlock nor the seccomp filter holds. The bounding set is emptied first (it
    needs ``CAP_SETPCAP``: a server that has none has no capability to drop there either),
    then the ambient set, then the effective, permitted and inheritable sets."""
    libc = landlock.libc()
    for cap in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == _EINVAL:
            break  # past the kernel's last capability
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")


def _first_to_die() -> None:
    """The kernel's out-of-memory killer takes this process (and what it starts) before any
    other: a pack's memory (its children each have an address space of their own) never
    costs the control plane its life. Without ``CAP_SYS_RESOURCE`` it cannot lower it."""
    try:
        with open("/proc/self/oom_score_adj", "w") as adj:
            adj.write("1000")
    except OSError:
        pass  # no /proc (or no such file): nothing to ask of the kernel


# -- seccomp: no new unix sockets (include/uapi/linux/seccomp.h, filter.h) -------------------

_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF0000
_RET_EACCES = 0x00050000 | 13
_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_RET_ENOSYS = 0x00050000 | 38
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
#: ``clone`` flags that make a namespace (``CLONE_NEWNS``, ``NEWCGROUP``, ``NEWUTS``,
#: ``NEWIPC``, ``NEWUSER``, ``NEWPID``, ``NEWNET``, ``NEWTIME``).
_CLONE_NEW = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
_CLONE_NEW |= 0x20000000 | 0x40000000 | 0x00000080


@dataclass(frozen=True, slots=True)
class _Calls:
    """One machine's system call numbers for the filter."""

    audit_arch: int
    socket: int
    clone: int
    clone3: int
    #: Refused outright: ``io_uring_setup`` (it makes sockets without ``socket``), System V
    #: IPC (shared memory, semaphores and queues of the host's other processes, by
    #: guessable ids), the kernel keyrings (``add_key``, ``request_key``, ``keyctl``),
    #: ``unshare`` and ``setns`` (a user namespace of its own would hand the pack
    #: capabilities there, and the kernel's surface behind them).
    denied: tuple[int, ...]


_SECCOMP_ARCH: dict[str, _Calls] = {
    "x86_64": _Calls(
        0xC000003E,
        41,
        56,
        435,
        (425, 29, 30, 31, 64, 65, 66, 68, 69, 70, 71, 220, 248, 249, 250, 272, 308),
    ),
    "aarch64": _Calls(
        0xC00000B7,
        198,
        220,
        435,
        (425, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 217, 218, 219, 97, 268),
    ),
}
_AF_UNIX = 1
_AF_INET = 2
_AF_INET6 = 10
_AF_NETLINK = 16


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter)))


def _seccomp(families: tuple[int, ...] | None) -> bool:
    """Refuse (EACCES), to this process and what it starts, for good: ``socket()`` of any
    family but ``families`` (``None``: every family allowed), the system calls of
    :class:`_Calls`' ``denied``, and a ``clone`` that makes a namespace (``clone3``, whose
    flags a filter cannot read, answers ENOSYS: the C library then uses ``clone``).
    ``socketpair`` stays (asyncio's loop needs it; such a pair is connected to itself).
    False where there is no filter for this machine."""
    calls = _SECCOMP_ARCH.get(platform.machine())
    if calls is None:
        return False
    # Each op: (code, true target, false target, k), a target a label or None (the next
    # op); or a label (str) naming the position of the next op.
    ops: list[tuple[int, str | None, str | None, int] | str] = [
        (_LD_ABS, None, None, 4),  # seccomp_data.arch
        (_JEQ, None, "deny", calls.audit_arch),  # another ABI (i386 by int 0x80): refused
        (_LD_ABS, None, None, 0),  # seccomp_data.nr
        (_JGE, "deny", None, 0x40000000),  # x32 system calls
        *((_JEQ, "deny", None, nr) for nr in calls.denied),
        (_JEQ, "nosys", None, calls.clone3),
        (_JEQ, None, "socket", calls.clone),
        (_LD_ABS, None, None, 16),  # seccomp_data.args[0], low half (little-endian)
        (_JSET, "deny", "allow", _CLONE_NEW),
        "socket",
    ]
    if families is not None:
        ops.append((_JEQ, None, "allow", calls.socket))
        ops.append((_LD_ABS, None, None, 16))
        ops.extend((_JEQ, "allow", None, family) for family in families)
        ops.append((_RET, None, None, _RET_EACCES))
    ops += ["allow", (_RET, None, None, _RET_ALLOW), "deny", (_RET, None, None, _RET_EACCES)]
    ops += ["nosys", (_RET, None, None, _RET_ENOSYS)]
    labels: dict[str, int] = {}
    program: list[tuple[int, str | None, str | None, int]] = []
    for op in ops:
        if isinstance(op, str):
            labels[op] = len(program)
        else:
            program.append(op)

    def offset(at: int, target: str | None) -> int:
        return 0 if target is None else labels[target] - at - 1

    filters = (_SockFilter * len(program))(
        *(_SockFilter(c, offset(i, t), offset(i, f), k) for i, (c, t, f, k) in enumerate(program))
    )
    prog = _SockFprog(len(program), filters)
    if landlock.libc().prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_SECCOMP): {os.strerror(err)}")
    return True


#: How many entries of a loose import directory are looked at (the rest grant nothing).
MAX_LOOSE_ENTRIES = 4096
_METADATA = (".dist-info", ".egg-info")


class ImportPaths(NamedTuple):
    """What a worker reads code from: ``code`` (directories read whole, and single module
    files), and ``listed`` (directories whose names it may list, and nothing more)."""

    code: list[str]
    listed: list[str]


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _loose_code(directory: str) -> list[str]:
    """The parts of ``directory`` (on the import path, outside every interpreter prefix: a
    ``--plugin FILE``'s folder, a ``PYTHONPATH`` entry, a working directory) that Python
    imports from: its packages (a folder with ``__init__.py``, or named as an identifier with
    a module at its top: a namespace package), its modules (an import suffix, ``.pth``), its
    ``__pycache__`` and its distributions' metadata -- never its other files (a token file,
    an ``.env``, a configuration kept beside a plugin)."""
    suffixes = (*importlib.machinery.all_suffixes(), ".pth")
    found: list[str] = []
    try:
        with os.scandir(directory) as entries:
            for entry in itertools.islice(entries, MAX_LOOSE_ENTRIES):
                name = entry.name
                try:
                    if entry.is_dir():
                        kept = name == "__pycache__" or name.endswith(_METADATA)
                        if kept or (name.isidentifier() and _is_package(entry.path, suffixes)):
                            found.append(entry.path)
                    elif entry.is_file() and name.endswith(suffixes):
                        found.append(entry.path)
                except OSError:
                    continue
    except OSError:
        return []
    return found


def _is_package(path: str, suffixes: tuple[str, ...]) -> bool:
    """``path`` holds ``__init__.py`` or a module at its top (a namespace package)."""
    if os.path.isfile(os.path.join(path, "__init__.py")):
        return True
    try:
        with os.scandir(path) as entries:
            return any(
                e.name.endswith(suffixes) for e in itertools.islice(entries, MAX_LOOSE_ENTRIES)
            )
    except OSError:
        return False


def import_paths(paths: Iterable[str], prefixes: Iterable[str] = ()) -> ImportPaths:
    """What a worker reads code from, resolved: the interpreter's prefixes (and ``prefixes``,
    a venv's) whole, with every entry of ``paths`` (a ``sys.path``) beneath one of them; of
    any other entry of ``paths`` only the code Python imports (:func:`_loose_code`), its
    names listed; and the control plane's own schemas (beside its package in a source
    checkout). Never ``/`` nor the home directory as a whole."""
    home = os.path.realpath(os.path.expanduser("~"))
    given = [sys.prefix, sys.base_prefix, sys.exec_prefix, *prefixes]
    roots = [
        real
        for real in dict.fromkeys(os.path.realpath(p) for p in given if p)
        if real not in ("/", home) and os.path.exists(real)
    ]
    code, listed = list(roots), []
    with contextlib.suppress(OSError):  # the control plane's own data (a source checkout's)
        code.append(str(schemas_dir()))
    for real in dict.fromkeys(os.path.realpath(p) for p in paths):
        if real in ("/", home) or not os.path.exists(real) or _under(real, roots):
            continue
        if os.path.isdir(real):
            listed.append(real)
            code.extend(_loose_code(real))
        else:  # a zip archive on the path: read whole
            code.append(real)
    return ImportPaths(code, listed)


def _top_level_but_proc() -> list[str]:
    """Every entry of ``/`` but ``/proc`` (an unconfined pack's files: all, not the other
    processes'; ``/`` itself is no rule, which would cover ``/proc``)."""
    try:
        names = os.listdir("/")
    except OSError:
        return []
    return [os.path.join("/", name) for name in sorted(names) if name != "proc"]


def confine(reach: PackReach, import_paths: ImportPaths | None = None) -> Confinement:
    """Confine this process (an isolation worker, before it imports its pack) to ``reach``:
    no-new-privs, first to die out of memory, no capability, then every Landlock
    restriction the kernel offers, then (a pack without ambient credentials) no new unix
    sockets. ``import_paths``: what the worker imports code from (:func:`import_paths`: read
    and executed, never written; a loose directory's names listed, its code read).

    A pack that declared nothing and was granted nothing (``reach.confined`` false) keeps
    the filesystem but ``/proc`` (the operator has not said what it may touch), the network
    and unix sockets, but not the other processes (their ``/proc``, signals, abstract
    sockets). Raises :class:`OSError` when the kernel refuses a restriction it offers."""
    landlock.no_new_privs()
    _first_to_die()
    _drop_capabilities()
    abi, _ = kernel_support()
    # A pack granted no egress (an empty list) connects and binds no TCP port; one granted
    # egress is held to it by ctx.reach (Landlock restricts ports, not destinations).
    tcp = abi >= 4 and reach.egress is not None and not reach.egress
    if abi > 0:
        ruleset = landlock.Ruleset(abi, tcp=tcp)
        everything, read = ruleset.handled_fs, landlock.READ
        ruleset.allow([os.path.realpath("/proc/self"), *PROC_READ], read)
        if reach.confined:
            code = import_paths or ImportPaths([], [])
            ruleset.allow([*SYSTEM_READ, *code.code], read | landlock.EXECUTE)
            ruleset.allow(code.listed, landlock.READ_DIR)
            ruleset.allow([reach.scratch.home()], read)  # the programs' HOME: empty, read-only
            ruleset.allow(["/dev/urandom", "/dev/random"], read)
            ruleset.allow(["/dev/null", "/dev/zero"], landlock.READ_FILE | landlock.WRITE_FILE)
            ruleset.allow(reach.reads, read)
            ruleset.allow(reach.writes, everything)
        else:  # everything the operator has not restricted: all but other processes
            ruleset.allow(_top_level_but_proc(), everything)
        ruleset.restrict()
    # Sockets (seccomp): a pack granted no egress makes no network socket (UDP included,
    # which Landlock does not restrict); one without ambient credentials no unix socket
    # (Landlock does not restrict connecting to a pathname one: a fork server's, an agent's).
    # The families it may use are listed, never those it may not: a family not named here
    # (AF_VSOCK reaches the hypervisor's host, AF_SMC speaks TCP) is refused.
    no_net = reach.egress is not None and not reach.egress
    no_unix = reach.confined and not reach.ambient_credentials
    families: tuple[int, ...] | None
    if no_net and no_unix:
        families, sockets = (), "none"
    elif no_net:
        families, sockets = (_AF_UNIX,), "unix only"
    elif no_unix:
        # IP, and the kernel's routing netlink the C library's resolver asks (AI_ADDRCONFIG).
        families, sockets = (_AF_INET, _AF_INET6, _AF_NETLINK), "no unix"
    elif reach.confined:
        families, sockets = (_AF_UNIX, _AF_INET, _AF_INET6, _AF_NETLINK), "unix and IP"
    else:
        families, sockets = None, "any"
    if not _seccomp(families):
        sockets = "any"
    return Confinement(abi, abi > 0, tcp, abi >= 6, sockets)
