"""The ``lftp`` CLI (Debian's lftp) against a real FTP server (pyftpdlib)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, LOOPBACK, NET, NF, TO, UNRESOLVABLE, Served, cli, family, served
from corpus_live.servers import Ftp, ftp

Ctx = Served[Ftp]


FAM = family("lftp", "lftp against pyftpdlib, real", served(ftp), half="heldout")

SETTINGS = "set net:max-retries 1; set net:timeout 1; set net:reconnect-interval-base 1; set ftp:passive-mode true; "


def _lftp(
    commands: str,
    *,
    user: str = "app",
    password: str = "app-pw",
    port: Any = None,
    host: str = LOOPBACK,
) -> Any:
    def run(ctx: Ctx) -> None:
        p = ctx.server.port if port is None else port(ctx)
        cli(
            ["lftp", "-c", f"{SETTINGS}open -u {user},{password} -p {p} {host}; {commands}"],
            timeout=15,
        )

    return run


FAM.add(
    "bad_password", AUTH, "Login failed: 530 Authentication failed.", _lftp("ls", password="nope")
)
FAM.add(
    "no_file",
    NF,
    "get: Access failed: 550 No such file or directory",
    _lftp("get pub/ghost.txt -o /dev/null"),
)
FAM.add("no_dir", NF, "cd: Access failed: 550 No such file or directory", _lftp("cd ghost"))
FAM.add(
    "write_denied",
    AUTH,
    "put: Access failed: 550 Not enough privileges",
    _lftp("put /etc/hostname -o ro/new.txt", user="reader", password="reader-pw"),
)
FAM.add("refused", NET, "Connection refused", _lftp("ls", port=lambda c: c.net.closed))
FAM.add("dns", NET, "Name or service not known", _lftp("ls", host=UNRESOLVABLE, port=lambda c: 21))
FAM.add("silent", TO, "the server never greets", _lftp("ls", port=lambda c: c.net.silent))
