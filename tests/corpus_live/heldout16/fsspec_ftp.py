"""fsspec's FTP filesystem (``fsspec.implementations.ftp.FTPFileSystem``, over ftplib) as a
pack uses it (a fresh instance per call, the instance cache skipped, a 1 s timeout) against a
real ProFTPD (Debian's ``proftpd-basic``: users ``app`` and ``solo`` jailed in their home, a
root-owned ``locked`` directory, ``MaxStoreFileSize 4 Kb``, DELE denied to ``solo``, two
sessions per user) started by the setup. Nothing is faked. fsspec turns a few failures into
``FileNotFoundError``/``FileExistsError`` (the ftplib error chained) and lets ftplib's
``error_perm``/``error_temp`` and socket errors through as they are."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout3._daemons import Proftpd, proftpd

Ctx = Served[Proftpd]

FAM = family(
    "fsspec-ftp",
    "fsspec FTPFileSystem against ProFTPD (Debian), real",
    served(proftpd),
    half="heldout16",
)


def _ftpfs(c: Ctx, user: str, password: str, host: str, port: int | None) -> Any:
    from fsspec.implementations.ftp import FTPFileSystem  # type: ignore[import-untyped]

    return FTPFileSystem(
        host=host,
        port=c.server.port if port is None else port,
        username=user,
        password=password,
        timeout=1,
        skip_instance_cache=True,
        use_listings_cache=False,
    )


def _close(fs: Any) -> None:
    with contextlib.suppress(Exception):
        fs.ftp.close()


def _do(
    op: Callable[[Any], Any],
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        fs = _ftpfs(c, user, password, host, None if port is None else port(c))
        try:
            op(fs)
        finally:
            _close(fs)

    return run


def _third_session(c: Ctx) -> None:
    held = [_ftpfs(c, "solo", "solo-pw", LOOPBACK, None) for _ in range(2)]
    try:
        _ftpfs(c, "solo", "solo-pw", LOOPBACK, None).ls("/")
    finally:
        for h in held:
            _close(h)


FAM.add(
    "wrong_password",
    AUTH,
    "530 Login incorrect",
    _do(lambda f: f.ls("/"), password="not-it"),
)
FAM.add(
    "unknown_user",
    AUTH,
    "530 Login incorrect for a user ProFTPD does not know",
    _do(lambda f: f.ls("/"), user="mallory", password="x"),
)
FAM.add(
    "read_missing_file",
    NF,
    "FileNotFoundError: RETR of docs/ghost.txt, which does not exist",
    _do(lambda f: f.cat_file("/docs/ghost.txt")),
)
FAM.add(
    "list_missing_dir",
    NF,
    "FileNotFoundError: listing a directory that does not exist",
    _do(lambda f: f.ls("/nowhere")),
)
FAM.add(
    "makedirs_exists",
    EXISTS,
    "FileExistsError: makedirs of docs without exist_ok",
    _do(lambda f: f.makedirs("/docs")),
)
FAM.add(
    "mkdir_exists",
    EXISTS,
    "550 docs: File exists (MKD of a directory that is there)",
    _do(lambda f: f.mkdir("/docs", create_parents=False)),
)
FAM.add(
    "write_locked_dir",
    AUTH,
    "550 Permission denied: STOR into a root-owned directory",
    _do(lambda f: f.pipe_file("/locked/new.txt", b"hello\n")),
)
FAM.add(
    "delete_denied",
    AUTH,
    "550 Operation not permitted: DELE is denied to user solo by the server's <Limit DELE>",
    _do(lambda f: f.rm_file("/docs/readme.txt"), user="solo", password="solo-pw"),
)
FAM.add(
    "file_too_large",
    QUOTA | INT,
    "MaxStoreFileSize 4 Kb: an 8 KiB upload is aborted by the server",
    _do(lambda f: f.pipe_file("/big.bin", b"x" * 8192)),
)
FAM.add(
    "max_clients_per_user",
    RL | QUOTA,
    "a third session for solo: the maximum number of clients (2) for this user are connected",
    _third_session,
)
FAM.add(
    "rmdir_not_empty",
    INT,
    "550 RMD of docs, which holds a file: directory not empty (the pack's request)",
    _do(lambda f: f.rmdir("/docs")),
)
FAM.add(
    "rename_missing",
    NF,
    "550 RNFR of a file that does not exist",
    _do(lambda f: f.mv("/docs/ghost.txt", "/docs/other.txt")),
)
FAM.add(
    "refused",
    NET,
    "nothing listens",
    _do(lambda f: f.ls("/"), port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "host does not resolve (.invalid)",
    _do(lambda f: f.ls("/"), host=UNRESOLVABLE, port=lambda c: 21),
)
FAM.add(
    "silent",
    TO,
    "the server never sends its greeting (timeout 1 s)",
    _do(lambda f: f.ls("/"), port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "the server closed at once, before its greeting",
    _do(lambda f: f.ls("/"), port=lambda c: c.net.close_now),
)
