"""The ``rsync`` CLI (Debian's ``rsync``) run as a pack runs it, against a real rsync daemon
(the same ``rsync --daemon``, started with a module per policy: password-protected and read
only, writable, one that refuses ``--delete``, one open to another network only, one limited
to a single connection that a held session fills). The failure is the exit status and the
daemon's ``@ERROR`` / ``rsync: ...`` lines on stderr. Nothing is faked."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    cli,
    daemon,
    family,
    free_port,
    require,
    served,
)


@dataclass
class Rsyncd:
    port: int
    src: Path  # a local file to upload
    dest: Path  # a scratch directory to download into
    secrets: Path  # the client's password file (app's password)
    wrong: Path  # a password file with a wrong password


def _start(stack: contextlib.ExitStack, work: Path) -> Rsyncd:
    require("rsync")
    port = free_port()
    mods = {}
    for name in ("data", "drop", "nodelete", "closed", "busy"):
        mods[name] = work / name
        mods[name].mkdir()
    (mods["data"] / "report.txt").write_text("quarterly\n")
    (mods["busy"] / "x.txt").write_text("x\n")
    secrets = work / "rsyncd.secrets"
    secrets.write_text("app:app-pw\n")
    os.chmod(secrets, 0o600)
    client_pw = work / "client.pw"
    client_pw.write_text("app-pw\n")
    os.chmod(client_pw, 0o600)
    wrong_pw = work / "wrong.pw"
    wrong_pw.write_text("not-the-pw\n")
    os.chmod(wrong_pw, 0o600)
    uid, gid = os.getuid(), os.getgid()
    conf = work / "rsyncd.conf"
    conf.write_text(
        f"pid file = {work / 'rsyncd.pid'}\n"
        f"lock file = {work / 'rsyncd.lock'}\n"
        f"log file = {work / 'rsyncd.log'}\n"
        f"address = {LOOPBACK}\n"
        f"port = {port}\n"
        "use chroot = no\n"
        f"uid = {uid}\n"
        f"gid = {gid}\n"
        f"[data]\n  path = {mods['data']}\n  read only = yes\n  auth users = app\n"
        f"  secrets file = {secrets}\n"
        f"[drop]\n  path = {mods['drop']}\n  read only = no\n"
        f"[nodelete]\n  path = {mods['nodelete']}\n  read only = no\n  refuse options = delete\n"
        f"[closed]\n  path = {mods['closed']}\n  hosts allow = 10.9.0.0/16\n"
        f"[busy]\n  path = {mods['busy']}\n  max connections = 1\n"
    )
    daemon(
        stack,
        ["rsync", "--daemon", "--no-detach", f"--config={conf}"],
        port,
        log=work / "rsyncd.out",
    )
    src = work / "upload.txt"
    src.write_text("payload\n")
    dest = work / "dest"
    dest.mkdir()
    return Rsyncd(port, src, dest, client_pw, wrong_pw)


FAM = family(
    "rsync",
    "the rsync CLI against an rsync daemon (Debian), real",
    served(_start),
    half="heldout8",
)

Ctx = Served[Rsyncd]


def _rsync(
    remote: str,
    *extra: str,
    upload: bool = False,
    password: str = "secrets",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        pw = c.server.secrets if password == "secrets" else c.server.wrong
        url = f"rsync://app@{host}:{p}/{remote}"
        ends = [str(c.server.src), url] if upload else [url, str(c.server.dest) + "/"]
        cli(
            [
                "rsync",
                "-r",
                "--contimeout=1",
                "--timeout=1",
                f"--password-file={pw}",
                *extra,
                *ends,
            ],
            timeout=10,
        )

    return run


def _busy(c: Ctx) -> None:
    # a session that selected the module and holds its only slot
    with socket.create_connection((LOOPBACK, c.server.port), 2) as held:
        held.settimeout(2)
        held.recv(256)  # the daemon's greeting
        held.sendall(b"@RSYNCD: 32.0 sha1 sha256 md5 md4\nbusy\n")
        held.recv(256)  # @RSYNCD: OK
        _rsync("busy/")(c)


FAM.add(
    "wrong_password", AUTH, "auth failed on the protected module", _rsync("data/", password="wrong")
)
FAM.add("unknown_module", NF, "no such module", _rsync("archive/"))
FAM.add("host_denied", AUTH, "module open to another network only", _rsync("closed/"))
FAM.add("missing_path", NF, "no such file in the module", _rsync("data/2023/report.txt"))
FAM.add("read_only_module", AUTH, "upload to a read-only module", _rsync("data/", upload=True))
FAM.add(
    "refused_option",
    INT | AUTH,
    "the module refuses --delete",
    _rsync("nodelete/", "--delete", upload=True),
)
FAM.add("max_connections", RL, "the module's single connection slot is held", _busy)
FAM.add(
    "bad_option",
    INT,
    "the pack's own argv has an unknown option",
    _rsync("drop/", "--no-such-flag"),
)
FAM.add("refused", NET, "nothing listens", _rsync("drop/", port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _rsync("drop/", host=UNRESOLVABLE, port=lambda c: 873))
FAM.add(
    "silent",
    TO,
    "daemon never sends its greeting (--timeout=1)",
    _rsync("drop/", port=lambda c: c.net.silent),
)
FAM.add("dropped", NET, "closed at once", _rsync("drop/", port=lambda c: c.net.close_now))
FAM.add(
    "garbage",
    NET | INT,
    "peer answers bytes of no protocol",
    _rsync("drop/", port=lambda c: c.net.garbage),
)
