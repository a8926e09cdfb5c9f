"""Kernel confinement of an isolation worker to its pack's filesystem grant (no-new-privs,
Landlock).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import sys
from collections.abc import Iterable

from control_plane.core.reach import PackReach

__all__ = ["SYSTEM_READ", "confine", "kernel_support"]

#: System paths every worker may read and execute (those that exist).
SYSTEM_READ = (
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/libx32",
    "/bin",
    "/sbin",
    "/opt",
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
_PR_SET_NO_NEW_PRIVS = 38


def kernel_support() -> tuple[int, str]:
    """The Landlock ABI this kernel offers (0: none) and a sentence saying so."""
    try:
        import landlock
    except ImportError:
        return 0, "the landlock package is not installed: isolated packs are held by ctx.reach only"
    try:
        abi = int(landlock.landlock_abi_version())
    except OSError as exc:
        return 0, (
            f"this kernel ({platform.release()}) offers no Landlock ({exc.strerror}): "
            "isolated packs are held by no-new-privs and ctx.reach only"
        )
    return abi, f"isolated packs are confined to their grant by Landlock (ABI {abi})"


def _no_new_privs() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def _import_path() -> list[str]:
    home = os.path.realpath(os.path.expanduser("~"))
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path]
    return [
        real
        for real in (os.path.realpath(p) for p in paths if p)
        if real not in ("/", home) and os.path.exists(real)
    ]


def confine(reach: PackReach) -> int:
    """Confine this process (an isolation worker, single-threaded) to ``reach``: no-new-privs,
    then Landlock when there is one. The Landlock ABI applied (0: none)."""
    _no_new_privs()
    if not reach.confined:
        return 0
    abi, _ = kernel_support()
    if abi <= 0:
        return 0
    import landlock
    from landlock import FSAccess

    read_dir = FSAccess.READ_FILE | FSAccess.READ_DIR
    run = read_dir | FSAccess.EXECUTE
    everything = FSAccess.all()
    files = FSAccess.all_file()
    ruleset = landlock.Ruleset(restrict_rules=everything)

    def allow(paths: Iterable[str], rights: int) -> None:
        for path in dict.fromkeys(paths):
            with contextlib.suppress(FileNotFoundError, NotADirectoryError, PermissionError):
                mask = rights if os.path.isdir(path) else rights & files
                ruleset.allow(path, rules=FSAccess(mask))

    allow([*SYSTEM_READ, *_import_path()], run)
    allow(["/proc", "/dev/urandom", "/dev/random"], read_dir)
    allow(["/dev/null", "/dev/zero"], FSAccess.READ_FILE | FSAccess.WRITE_FILE)
    allow(reach.reads, read_dir)
    allow(reach.writes, everything)
    ruleset.apply()
    return abi
