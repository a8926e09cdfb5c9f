"""NcFTP's CLIs (Debian's ``ncftp``: ``ncftpget``, ``ncftpput``, ``ncftpls``) run as a pack
runs them, against a real ProFTPD (Debian's ``proftpd-basic``: users ``app`` and ``solo``
jailed in a home with ``docs/readme.txt`` and a ``locked/`` directory the server may not
write, a 4 KiB store limit, two sessions per user at most). The failure is the tool's exit
status (NcFTP documents one per kind of failure) and its stderr quoting the server's reply.
Nothing is faked."""

from __future__ import annotations

import contextlib
import ftplib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    TO,
    UNRESOLVABLE,
    Net,
    cli,
    family,
    net,
    require,
)
from corpus_live.heldout3._daemons import Proftpd, proftpd


@dataclass
class Ctx:
    server: Proftpd
    net: Net
    local: Path  # where downloads land
    small: Path  # a 1 KiB file to upload
    big: Path  # a 64 KiB file (over the 4 KiB store limit)


def _setup(stack: contextlib.ExitStack, work: Path) -> Ctx:
    require("ncftpget", "ncftpput", "ncftpls", "proftpd")
    server = proftpd(stack, work)
    local = work / "local"
    local.mkdir()
    small, big = work / "small.txt", work / "big.bin"
    small.write_bytes(b"s" * 1024)
    big.write_bytes(b"b" * 65536)
    return Ctx(server, net(stack), local, small, big)


FAM = family(
    "ncftp",
    "NcFTP's CLIs against ProFTPD (Debian), real",
    _setup,
    half="heldout8",
)


def _creds(user: str, password: str, host: str, port: int) -> list[str]:
    return ["-u", user, "-p", password, "-P", str(port), "-t", "1", "-r", "0", host]


def _get(
    remote: str,
    *,
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        cli(["ncftpget", "-V", *_creds(user, password, host, p), str(c.local), remote], timeout=6)

    return run


def _put(remote_dir: str, big: bool = False) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        src = c.big if big else c.small
        cli(
            [
                "ncftpput",
                "-V",
                *_creds("app", "app-pw", LOOPBACK, c.server.port),
                remote_dir,
                str(src),
            ],
            timeout=6,
        )

    return run


def _ls(path: str) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        cli(
            [
                "ncftpls",
                "-u",
                "app",
                "-p",
                "app-pw",
                "-P",
                str(c.server.port),
                "-t",
                "1",
                "-r",
                "0",
                f"ftp://{LOOPBACK}/{path}",
            ],
            timeout=6,
        )

    return run


def _sessions_full(c: Ctx) -> None:
    held = []
    try:
        for _ in range(2):
            ftp = ftplib.FTP()
            ftp.connect(LOOPBACK, c.server.port, timeout=2)
            ftp.login("app", "app-pw")
            held.append(ftp)
        _get("/docs/readme.txt")(c)
    finally:
        for ftp in held:
            with contextlib.suppress(OSError, ftplib.Error):
                ftp.quit()


FAM.add("wrong_password", AUTH, "login incorrect", _get("/docs/readme.txt", password="nope"))
FAM.add(
    "unknown_user",
    AUTH,
    "login incorrect for a user that does not exist",
    _get("/docs/readme.txt", user="ghost", password="ghost-pw"),
)
FAM.add("missing_file", NF, "no such file to download", _get("/docs/missing.txt"))
FAM.add("missing_directory", NF, "no such directory to list", _ls("archive/"))
FAM.add("missing_upload_dir", NF, "no such directory to upload into", _put("/nowhere"))
FAM.add("upload_denied", AUTH, "the server may not write locked/", _put("/locked"))
FAM.add(
    "store_limit",
    QUOTA | INT,
    "the upload exceeds the server's 4 KiB store limit",
    _put("/docs", big=True),
)
FAM.add(
    "sessions_full",
    RL | AUTH,
    "the user's two sessions are in use (a 530 NcFTP reports as a rejected login)",
    _sessions_full,
)
FAM.add("refused", NET, "nothing listens", _get("/docs/readme.txt", port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _get("/docs/readme.txt", host=UNRESOLVABLE, port=lambda c: 21),
)
FAM.add(
    "silent",
    TO,
    "server never sends its greeting (-t 1)",
    _get("/docs/readme.txt", port=lambda c: c.net.silent),
)
FAM.add("dropped", NET, "closed at once", _get("/docs/readme.txt", port=lambda c: c.net.close_now))
FAM.add(
    "garbage",
    NET | INT,
    "peer answers bytes of no protocol",
    _get("/docs/readme.txt", port=lambda c: c.net.garbage),
)
