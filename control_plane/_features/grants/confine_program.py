"""The one place a pack's programs are started confined to its grant (Landlock, by the kernel).

Every program a confined pack runs -- ``ctx.reach.run`` (:mod:`.tool_process`) and the MCP
servers of :mod:`.mcp_source` -- is started through :func:`wrap`: ``python -I -c BOOT argv``,
a small exec wrapper that, in the new process and before ``exec``, sets no-new-privs and
applies a Landlock ruleset built from the grant (:class:`~control_plane._kernel.reach.Confinement`):

* the read roots readable, the write roots writable, nothing else of the filesystem but the
  system paths a program needs to run (:data:`SYSTEM_READ`: ``/usr``, the libraries,
  ``/etc/ssl``, ...) and the program's own binary;
* TCP: ``connect`` only to the ports the pack checked (none when the grant has no egress),
  no ``bind`` (ABI 4 and later);
* no abstract unix sockets and no signals outside the program's own domain (ABI 6 and later).

A wrapper rather than ``preexec_fn``: the control plane is threaded, and a fork that runs
Python before ``exec`` may deadlock there (CPython documents ``preexec_fn`` as unsafe with
threads, and subinterpreters refuse it). The wrapper runs isolated (``-I``: no
``PYTHONPATH``, no user site, not the working directory on ``sys.path``, which may be a
caller's clone) and loads this file by its path, so it imports only the standard library.

This module imports nothing of the project: it is what the wrapper runs.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "ENV_SPEC",
    "SYSTEM_BASE",
    "SYSTEM_READ",
    "Ruleset",
    "abi",
    "apply",
    "no_new_privs",
    "probe",
    "support_line",
    "wrap",
]

#: The wrapper's one extra variable: the ruleset as JSON (paths and ports, never a secret).
#: Removed before ``exec``: the program never sees it.
ENV_SPEC = "CAPABILITY_PACKS_CONFINE"

#: What any dynamically linked program needs to run and may read and execute (those that
#: exist): its libraries, TLS and name resolution. Never a home, ``/tmp``, ``/var`` or
#: ``/srv``. An isolation worker's Python reads these too (``_features/grants/confine.py``).
SYSTEM_BASE = (
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/host.conf",
    "/etc/alternatives",
    "/etc/mime.types",
)
#: System paths every confined program may read and execute: :data:`SYSTEM_BASE` and what
#: the programs packs run (git, ssh, ffprobe) read of the system's configuration.
SYSTEM_READ = (
    *SYSTEM_BASE,
    "/etc/ld.so.preload",
    "/etc/services",
    "/etc/protocols",
    "/etc/passwd",
    "/etc/group",
    "/etc/ssh/ssh_config",
    "/etc/ssh/ssh_config.d",
    "/etc/ssh/ssh_known_hosts",
    "/etc/gitconfig",
)
#: Readable (not executable): the process's own view of itself, randomness.
_PROC_READ = ("/proc", "/dev/urandom", "/dev/random", "/dev/zero")
#: Readable and writable files every program may use.
_DEV_WRITE = ("/dev/null",)

# -- Landlock (include/uapi/linux/landlock.h): the one place a ruleset is built -------------
#
# Both confinements use it: this wrapper's (a pack's programs) and the isolation worker's
# (``_features/grants/confine.py``, which adds seccomp and capabilities around it).

_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446  # the same on every architecture
_CREATE_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
READ = READ_FILE | READ_DIR
TRUNCATE = 1 << 14
IOCTL_DEV = 1 << 15
#: File rights (what a rule on a non-directory may hold).
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
_NET_BIND, _NET_CONNECT = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1


def fs_rights(version: int) -> int:
    """Every filesystem right the kernel's ABI ``version`` knows (all of them handled)."""
    rights = (1 << 13) - 1  # ABI 1: execute .. make_sym
    if version >= 2:
        rights |= 1 << 13  # refer
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _NetPort(ctypes.Structure):
    _fields_ = (("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64))


_LIBC: list[Any] = []


def libc() -> Any:
    """The C library (``errno`` kept), its ``syscall`` returning a ``long``."""
    if not _LIBC:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.syscall.restype = ctypes.c_long
        _LIBC.append(lib)
    return _LIBC[0]


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"landlock {what}: {os.strerror(errno)}")
    return result


_PROBED: list[tuple[int, str]] = []


def probe() -> tuple[int, str]:
    """The Landlock ABI version this kernel offers and, when it offers none (0), why."""
    if not _PROBED:
        if not sys.platform.startswith("linux"):
            _PROBED.append((0, "not Linux"))
        else:
            found = int(libc().syscall(_SYS_CREATE, None, ctypes.c_size_t(0), _CREATE_VERSION))
            why = os.strerror(ctypes.get_errno()) if found < 0 else ""
            _PROBED.append((max(0, found), why))
    return _PROBED[0]


def abi() -> int:
    """The Landlock ABI version this kernel offers (0: none, or not Linux)."""
    return probe()[0]


def no_new_privs() -> None:
    """Set no-new-privs on this process (Landlock needs it unprivileged; kept for good)."""
    _check(libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


class Ruleset:
    """A Landlock ruleset being built for this process: every filesystem right of ``version``
    handled (so denied but where :meth:`allow` grants it), TCP ``bind`` and ``connect``
    handled when ``tcp`` (ABI 4; denied but the ports :meth:`connect` grants), abstract unix
    sockets and signals scoped to the domain where the kernel offers it (ABI 6). Nothing
    holds until :meth:`restrict`."""

    def __init__(self, version: int, *, tcp: bool) -> None:
        self.version = version
        self.handled_fs = fs_rights(version)
        self.tcp = tcp and version >= 4
        self.scoped = version >= 6
        attr = _RulesetAttr(
            self.handled_fs,
            _NET_BIND | _NET_CONNECT if self.tcp else 0,
            _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if self.scoped else 0,
        )
        size = 24 if version >= 6 else 16 if version >= 4 else 8
        self.fd = _check(
            libc().syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), 0), "create"
        )

    def allow(self, paths: Iterable[str], rights: int) -> None:
        """Grant ``rights`` beneath each of ``paths`` (a file: its file rights only); a path
        that does not exist grants nothing."""
        for path in dict.fromkeys(paths):
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                mask = rights & self.handled_fs
                if not os.path.isdir(path):
                    mask &= _FILE_RIGHTS
                rule = _PathBeneath(mask, fd)
                _check(
                    libc().syscall(
                        _SYS_ADD_RULE, self.fd, _RULE_PATH_BENEATH, ctypes.byref(rule), 0
                    ),
                    f"rule for {path}",
                )
            finally:
                os.close(fd)

    def connect(self, ports: Iterable[int]) -> None:
        """Grant TCP ``connect`` to each of ``ports`` (only when TCP is handled)."""
        if not self.tcp:
            return
        for port in ports:
            net = _NetPort(_NET_CONNECT, int(port))
            _check(
                libc().syscall(_SYS_ADD_RULE, self.fd, _RULE_NET_PORT, ctypes.byref(net), 0),
                f"rule for port {port}",
            )

    def restrict(self) -> None:
        """Confine this process, and what it starts, to the ruleset, for good."""
        try:
            _check(libc().syscall(_SYS_RESTRICT, self.fd, 0), "restrict_self")
        finally:
            os.close(self.fd)


def support_line() -> str:
    """What the kernel offers the programs packs run (said at start-up)."""
    version = abi()
    if version <= 0:
        return (
            f"this kernel ({platform.release()}) offers no Landlock: the programs packs run "
            "(git, ffprobe, MCP servers) are held by the argument checks only, not confined "
            "to their grant (docs/grants.md)"
        )
    net = (
        "TCP connect only to the checked port"
        if version >= 4
        else "network not restricted (Landlock ABI < 4)"
    )
    scope = (
        "; no abstract sockets or signals outside"
        if version >= 6
        else "; abstract sockets and signals not scoped (ABI < 6)"
    )
    return (
        f"programs of confined packs (git, ffprobe, MCP servers) run under Landlock ABI "
        f"{version}: files of their grant only, {net}{scope} (docs/grants.md)"
    )


# -- the parent's side ---------------------------------------------------------------------


def _executable(program: str, env: Mapping[str, str] | None) -> str:
    """``program`` as an executable path (``PATH`` of the child's environment); raises
    ``FileNotFoundError`` as ``exec`` would, so the caller's missing-program path holds."""
    path = (env or os.environ).get("PATH", os.defpath)
    found = program if "/" in program else shutil.which(program, path=path)
    if found is None or not os.access(found, os.X_OK) or os.path.isdir(found):
        raise FileNotFoundError(2, "No such file or directory", program)
    return found


#: What the wrapper runs: this file, loaded by path (no package import, no site).
_BOOT = (
    "import importlib.util as u,sys;"
    "s=u.spec_from_file_location('capability_packs_confine',sys.argv[1]);"
    "m=u.module_from_spec(s);s.loader.exec_module(m);m._main(sys.argv[2:])"
)


def wrap(
    argv: Sequence[str],
    env: Mapping[str, str] | None,
    *,
    reads: Iterable[str],
    writes: Iterable[str],
    connect: Iterable[int] | None,
) -> tuple[list[str], dict[str, str] | None]:
    """``(argv, env)`` that start ``argv`` confined: the wrapper's command line and its
    environment (``env`` plus :data:`ENV_SPEC`). Unchanged when the kernel has no Landlock
    (:func:`support_line` said so at start-up). Raises ``FileNotFoundError`` for a missing
    program, as ``exec`` would."""
    program = _executable(argv[0], env)
    if abi() <= 0:
        return list(argv), None if env is None else dict(env)
    spec = {
        "reads": list(reads),
        "writes": list(writes),
        "runs": [os.path.realpath(program)],
        "connect": None if connect is None else sorted({int(p) for p in connect}),
    }
    child = dict(os.environ if env is None else env)
    child[ENV_SPEC] = json.dumps(spec)
    boot = [sys.executable, "-I", "-B", "-c", _BOOT, os.path.abspath(__file__)]
    return [*boot, program, *argv[1:]], child


# -- the child's side (the wrapper) --------------------------------------------------------


def apply(
    reads: Iterable[str],
    writes: Iterable[str],
    connect: Iterable[int] | None,
    runs: Iterable[str] = (),
) -> int:
    """Confine this process (and what it ``exec``s) to ``reads`` (read-only), ``writes``
    (everything but executing), ``runs`` (read and execute: the program) and TCP ``connect``
    ports (``None``: TCP not restricted); the ABI applied (0: none)."""
    no_new_privs()
    version = abi()
    if version <= 0:
        return 0
    ruleset = Ruleset(version, tcp=connect is not None)
    everything = ruleset.handled_fs
    ruleset.allow(SYSTEM_READ, READ | EXECUTE)
    ruleset.allow(_PROC_READ, READ)
    ruleset.allow(_DEV_WRITE, READ | WRITE_FILE | TRUNCATE | IOCTL_DEV)
    ruleset.allow(runs, READ | EXECUTE)
    ruleset.allow(reads, READ)
    ruleset.allow(writes, everything & ~EXECUTE)
    ruleset.connect(connect or ())
    ruleset.restrict()
    return version


def _main(argv: list[str]) -> None:
    """The wrapper: confine to :data:`ENV_SPEC`, then become ``argv`` (never returns)."""
    spec = json.loads(os.environ.pop(ENV_SPEC))
    try:
        apply(spec["reads"], spec["writes"], spec["connect"], spec["runs"])
    except OSError as exc:
        sys.stderr.write(f"capability-packs: cannot confine {argv[0]}: {exc}\n")
        os._exit(126)
    os.execv(argv[0], argv)
