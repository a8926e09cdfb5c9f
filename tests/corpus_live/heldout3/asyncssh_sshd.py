"""asyncssh against a real OpenSSH sshd (Debian's ``openssh-server``): SSH authentication and
host-key failures, SFTP status codes (``SSH_FX_NO_SUCH_FILE``, ``SSH_FX_PERMISSION_DENIED``)
and remote commands' exit statuses with their stderr."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    DEP,
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
from corpus_live.heldout3._daemons import Sshd, sshd

Ctx = Served[Sshd]

FAM = family("asyncssh", "OpenSSH 9.2 sshd (Debian), real", served(sshd), half="heldout3")


async def _connect(
    c: Ctx,
    *,
    user: str = "root",
    key: Any = None,
    known: Any = None,
    host: str = LOOPBACK,
    port: int | None = None,
) -> Any:
    import asyncssh

    return await asyncssh.connect(
        host,
        port=c.server.port if port is None else port,
        username=user,
        client_keys=[str(key or c.server.key)],
        known_hosts=str(known or c.server.known_hosts),
        password=None,
        agent_path=None,
        config=[],
        connect_timeout=2,
        login_timeout=3,
    )


def _sftp(op: Any, user: str = "nobody") -> Any:
    async def run(c: Ctx) -> Any:
        async with await _connect(c, user=user) as conn, conn.start_sftp_client() as sftp:
            return await op(sftp, c.server)

    return run


def _run(command: str, timeout: float | None = None) -> Any:
    async def run(c: Ctx) -> Any:
        async with await _connect(c) as conn:
            return await conn.run(command, check=True, timeout=timeout)

    return run


def _login(**kw: Any) -> Any:
    async def run(c: Ctx) -> Any:
        conn = await _connect(c, **kw)
        conn.close()
        await conn.wait_closed()

    return run


FAM.add(
    "key_not_authorized",
    AUTH,
    "publickey denied: the client's key is not in authorized_keys",
    lambda c: _login(key=c.server.other_key)(c),
)
FAM.add(
    "unknown_user", AUTH, "publickey denied for a user that does not exist", _login(user="ghost")
)
FAM.add(
    "host_key_mismatch",
    AUTH | INT,
    "the server's host key is not the one known for it (possible impersonation): never retry",
    lambda c: _login(known=c.server.wrong_known_hosts)(c),
)
FAM.add(
    "sftp_no_such_file",
    NF,
    "SSH_FX_NO_SUCH_FILE on open",
    _sftp(lambda s, srv: s.open(str(srv.home / "nope.txt"))),
)
FAM.add(
    "sftp_listdir_missing",
    NF,
    "SSH_FX_NO_SUCH_FILE on opendir",
    _sftp(lambda s, srv: s.listdir(str(srv.home / "nodir"))),
)
FAM.add(
    "sftp_remove_missing",
    NF,
    "SSH_FX_NO_SUCH_FILE on remove",
    _sftp(lambda s, srv: s.remove(str(srv.home / "ghost.txt")), user="root"),
)
FAM.add(
    "sftp_permission",
    AUTH,
    "SSH_FX_PERMISSION_DENIED: nobody may not read a root-only file",
    _sftp(lambda s, srv: s.open(str(srv.secret))),
)
FAM.add(
    "sftp_write_denied",
    AUTH,
    "SSH_FX_PERMISSION_DENIED: nobody may not write into root's directory",
    _sftp(lambda s, srv: s.open(str(srv.home / "new.txt"), "w")),
)
FAM.add(
    "command_no_such_file",
    NF,
    "the remote command exits 2: ls: cannot access '/nope': No such file or directory",
    _run("ls /nope"),
)
FAM.add(
    "command_not_found",
    DEP | INT,
    "the remote shell exits 127: command not found (a program missing on the remote host)",
    _run("no-such-tool --version"),
)
FAM.add(
    "command_timeout",
    TO,
    "the remote command runs past the call's timeout",
    _run("sleep 5", timeout=1),
)


def _transport(port: Any, host: str = LOOPBACK) -> Any:
    async def run(c: Ctx) -> Any:
        conn = await _connect(c, host=host, port=port(c))
        conn.close()

    return run


FAM.add("refused", NET, "nothing listens", _transport(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _transport(lambda c: 22, UNRESOLVABLE))
FAM.add("silent", TO, "no SSH banner (connect_timeout 2)", _transport(lambda c: c.net.silent))
FAM.add("dropped", NET, "closed before the banner", _transport(lambda c: c.net.close_now))
