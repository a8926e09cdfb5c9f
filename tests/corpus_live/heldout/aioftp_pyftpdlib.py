"""aioftp (an asyncio FTP client) against a real FTP server (pyftpdlib) on loopback."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.servers import Ftp, ftp

Ctx = Served[Ftp]


FAM = family("aioftp", "pyftpdlib 2.2 FTP server, real", served(ftp), half="heldout")


def _do(
    op: Any = None,
    *,
    user: str = "app",
    password: str = "app-pw",
    port: Any = None,
    host: str = LOOPBACK,
) -> Any:
    async def run(ctx: Ctx) -> Any:
        import aioftp

        p = ctx.server.port if port is None else port(ctx)
        async with aioftp.Client.context(
            host, p, user, password, socket_timeout=1, connection_timeout=1
        ) as client:
            if op is not None:
                return await op(client)
            return None

    return run


async def _download_missing(c: Any) -> Any:
    async with c.download_stream("pub/ghost.txt") as stream:
        return await stream.read()


async def _upload_ro(c: Any) -> Any:
    async with c.upload_stream("ro/new.txt") as stream:
        await stream.write(b"x")


async def _mkdir_exists(c: Any) -> Any:
    return await c.command("MKD pub", "257")


FAM.add("bad_password", AUTH, "530 authentication failed", _do(password="nope"))
FAM.add(
    "unknown_user",
    AUTH,
    "530 authentication failed (no such user)",
    _do(user="ghost", password="x"),
)
FAM.add("refused", NET, "nothing listens", _do(port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _do(host=UNRESOLVABLE, port=lambda c: 21))
FAM.add("silent", TO, "server never greets", _do(port=lambda c: c.net.silent))
FAM.add("dropped", NET, "closed at once", _do(port=lambda c: c.net.close_now))
FAM.add("no_file", NF, "550 no such file or directory (RETR)", _do(_download_missing))
FAM.add("no_dir", NF, "550 no such directory (CWD)", _do(lambda c: c.change_directory("ghost")))
FAM.add("stat_missing", NF, "550 on a missing path (stat)", _do(lambda c: c.stat("pub/ghost.txt")))
FAM.add(
    "write_denied",
    AUTH,
    "550 not enough privileges (STOR as a reader)",
    _do(_upload_ro, user="reader", password="reader-pw"),
)
FAM.add(
    "delete_denied",
    AUTH,
    "550 not enough privileges (DELE as a reader)",
    _do(lambda c: c.remove_file("ro/file.txt"), user="reader", password="reader-pw"),
)
FAM.add("mkdir_exists", EXISTS, "550 file exists (MKD)", _do(_mkdir_exists))
FAM.add(
    "unknown_command", INT, "500 command not understood", _do(lambda c: c.command("XYZZY", "200"))
)
