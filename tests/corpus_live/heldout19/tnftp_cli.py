"""The ``tnftp`` CLI (NetBSD's FTP client, Debian's tnftp) run as a pack runs it, in
auto-fetch mode (``-o`` to download an ``ftp://`` URL, ``-u`` to upload), against a real
ProFTPD (Debian's ``proftpd``: users from a file, jailed homes, a 4 KiB upload limit, a
root-owned directory, a user allowed two sessions). The failure is the exit status and the
lines tnftp writes: the server's reply on stdout, its own complaints on stderr."""

from __future__ import annotations

import contextlib
import ftplib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    local: Path  # the pack's working directory: files to upload, downloads


def _setup(stack: contextlib.ExitStack, work: Path) -> Ctx:
    require("tnftp", "proftpd")
    local = work / "local"
    local.mkdir()
    (local / "notes.txt").write_text("notes\n")
    (local / "dump.bin").write_bytes(b"\0" * 10_000)
    return Ctx(proftpd(stack, work), net(stack), local)


FAM = family(
    "tnftp",
    "the tnftp CLI against ProFTPD (Debian), real",
    _setup,
    half="heldout19",
)


def _url(c: Ctx, path: str, auth: str | None = "app:app-pw", port: int | None = None) -> str:
    who = f"{auth}@" if auth else ""
    return f"ftp://{who}{LOOPBACK}:{port or c.server.port}{path}"


def _get(c: Ctx, url: str, *opts: str) -> None:
    cli(["tnftp", *opts, "-o", str(c.local / "download"), url], timeout=10)


def _put(c: Ctx, url: str, name: str) -> None:
    import subprocess

    # tnftp names the remote file after the local argument: run it where the file is
    subprocess.run(
        ["tnftp", "-u", url, name],
        cwd=c.local,
        capture_output=True,
        check=True,
        timeout=10,
        stdin=subprocess.DEVNULL,
    )


@FAM.case("bad_password", AUTH, "530 Login incorrect: the password is wrong")
def _bad_password(c: Ctx) -> Any:
    _get(c, _url(c, "/docs/readme.txt", "app:not-the-password"))


@FAM.case("unknown_user", AUTH, "530 Login incorrect: no such FTP account")
def _unknown_user(c: Ctx) -> Any:
    _get(c, _url(c, "/docs/readme.txt", "reports:reports-pw"))


@FAM.case("anonymous", AUTH, "no credentials in the URL: the anonymous login is refused")
def _anonymous(c: Ctx) -> Any:
    _get(c, _url(c, "/docs/readme.txt", None))


@FAM.case("missing_file", NF, "550 No such file or directory (download)")
def _missing_file(c: Ctx) -> Any:
    _get(c, _url(c, "/docs/changelog.txt"))


@FAM.case("not_a_file", INT, "the pack asks to download a directory: Not a regular file")
def _not_a_file(c: Ctx) -> Any:
    _get(c, _url(c, "/docs"))


@FAM.case(
    "upload_too_large",
    QUOTA | INT,
    "the 10 kB upload is over the server's MaxStoreFileSize: File too large",
)
def _too_large(c: Ctx) -> Any:
    _put(c, _url(c, "/docs/"), "dump.bin")


@FAM.case("upload_denied", AUTH, "550 Permission denied: the directory is not the user's")
def _denied(c: Ctx) -> Any:
    _put(c, _url(c, "/locked/"), "notes.txt")


@FAM.case("upload_no_dir", NF, "550 No such file or directory: the target directory is missing")
def _no_dir(c: Ctx) -> Any:
    _put(c, _url(c, "/outbox/"), "notes.txt")


@FAM.case("local_file_missing", INT, "the pack uploads a local file that does not exist")
def _local_missing(c: Ctx) -> Any:
    _put(c, _url(c, "/docs/"), "report.pdf")


@FAM.case("bad_url", INT, "the pack builds a URL with an impossible port")
def _bad_url(c: Ctx) -> Any:
    _get(c, f"ftp://app:app-pw@{LOOPBACK}:99999/docs/readme.txt")


@FAM.case(
    "too_many_sessions",
    RL | NET,
    "the user's two sessions are in use: the maximum number of clients are already connected",
)
def _too_many(c: Ctx) -> Any:
    with contextlib.ExitStack() as held:
        for _ in range(2):
            ftp = ftplib.FTP()
            ftp.connect(LOOPBACK, c.server.port, timeout=5)
            held.callback(ftp.close)
            ftp.login("solo", "solo-pw")
        _get(c, _url(c, "/docs/readme.txt", "solo:solo-pw"))


@FAM.case("refused", NET, "nothing listens")
def _refused(c: Ctx) -> Any:
    _get(c, _url(c, "/docs/readme.txt", port=c.net.closed))


@FAM.case("dns", NET, "host does not resolve")
def _dns(c: Ctx) -> Any:
    _get(c, f"ftp://app:app-pw@{UNRESOLVABLE}/docs/readme.txt")


@FAM.case(
    "silent",
    TO | NET,
    "server never greets: tnftp's stall timeout (-q 1) gives up on the connection",
)
def _silent(c: Ctx) -> Any:
    _get(c, _url(c, "/docs/readme.txt", port=c.net.silent), "-q", "1")


@FAM.case("dropped", NET, "closed at once")
def _dropped(c: Ctx) -> Any:
    _get(c, _url(c, "/docs/readme.txt", port=c.net.close_now))


@FAM.case("garbage", NET, "the peer answers bytes of no protocol instead of a greeting")
def _garbage(c: Ctx) -> Any:
    _get(c, _url(c, "/docs/readme.txt", port=c.net.garbage))
