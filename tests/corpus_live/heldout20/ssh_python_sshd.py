"""ssh-python (libssh's binding, ``import ssh``; not libssh2's ssh2-python) against a real
OpenSSH ``sshd`` (Debian's openssh-server, ``heldout3._daemons.sshd``: public keys only,
``root`` with a shell, ``nobody`` SFTP-only), as a pack would use it: ``Session`` with
``HOST``/``PORT``/``USER``/``TIMEOUT`` options, ``connect``, public-key
login, SFTP and a direct-tcpip channel. Refused, unresolvable, silent, dropping and garbage
peers are real sockets on 127.0.0.1. Nothing is faked."""

from __future__ import annotations

import os
from pathlib import Path
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
from corpus_live.heldout3._daemons import Sshd, sshd

FAM = family(
    "ssh-python",
    "ssh-python (libssh) against OpenSSH's sshd (Debian), real",
    served(sshd),
    half="heldout20",
)

Ctx = Served[Sshd]


def _session(port: int, host: str = LOOPBACK, user: str = "root") -> Any:
    from ssh import options  # type: ignore[import-untyped]
    from ssh.session import Session  # type: ignore[import-untyped]

    s = Session()
    s.options_set(options.HOST, host)
    s.options_set_port(port)
    s.options_set(options.USER, user)
    s.options_set_int_val(options.TIMEOUT, 1)
    s.connect()
    return s


def _login(c: Ctx, user: str = "root", key: Path | None = None) -> Any:
    from ssh.key import import_privkey_file  # type: ignore[import-untyped]

    s = _session(c.server.port, user=user)
    s.userauth_publickey(import_privkey_file(str(key or c.server.key)))
    return s


def _sftp(c: Ctx, user: str = "root") -> Any:
    s = _login(c, user)
    sftp = s.sftp_new()
    sftp.init()
    return sftp


@FAM.case("wrong_key", AUTH, "a key the server has not authorized: Permission denied (publickey)")
def _wrong_key(c: Ctx) -> Any:
    return _login(c, key=c.server.other_key)


@FAM.case("unknown_user", AUTH, "a user the server does not know")
def _unknown_user(c: Ctx) -> Any:
    return _login(c, user="ghost")


@FAM.case(
    "password_disabled",
    AUTH,
    "password login on a server that allows public keys only",
)
def _password(c: Ctx) -> Any:
    return _session(c.server.port).userauth_password("root", "hunter2")


@FAM.case("key_file_missing", NF | INT, "the private key file the pack names does not exist")
def _key_missing(c: Ctx) -> Any:
    return _login(c, key=Path("/nonexistent/id_ed25519"))


@FAM.case("sftp_missing", NF, "SFTP stat of a file that does not exist: no such file")
def _sftp_missing(c: Ctx) -> Any:
    return _sftp(c).stat(str(c.server.home / "nothing.txt"))


@FAM.case(
    "sftp_permission",
    AUTH,
    "the SFTP-only user nobody opens a file only root may read: permission denied",
)
def _sftp_permission(c: Ctx) -> Any:
    return _sftp(c, "nobody").open(str(c.server.secret), os.O_RDONLY, 0)


@FAM.case(
    "sftp_mkdir_exists",
    EXISTS | INT,
    "SFTP mkdir of a directory that already exists (OpenSSH's sftp-server answers Failure)",
)
def _mkdir_exists(c: Ctx) -> Any:
    return _sftp(c).mkdir(str(c.server.home), 0o755)


@FAM.case(
    "sftp_rmdir_not_empty",
    INT,
    "SFTP rmdir of a directory that still holds files: failure",
)
def _rmdir(c: Ctx) -> Any:
    return _sftp(c).rmdir(str(c.server.home))


@FAM.case(
    "sftp_write_denied",
    AUTH,
    "the SFTP-only user nobody creates a file in a directory owned by root",
)
def _write_denied(c: Ctx) -> Any:
    return _sftp(c, "nobody").open(
        str(c.server.home / "new.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644
    )


@FAM.case(
    "forward_refused",
    NET,
    "a direct-tcpip channel to a local port nothing listens on: the open fails",
)
def _forward(c: Ctx) -> Any:
    s = _login(c)
    chan = s.channel_new()
    return chan.open_forward(LOOPBACK, c.net.closed, LOOPBACK, 50000)


@FAM.case("refused", NET, "nothing listens")
def _refused(c: Ctx) -> Any:
    return _session(c.net.closed)


@FAM.case("dns", NET, "host does not resolve (.invalid)")
def _dns(c: Ctx) -> Any:
    return _session(22, host=UNRESOLVABLE)


@FAM.case("silent", TO, "the server never sends its banner: the 1 s TIMEOUT option")
def _silent(c: Ctx) -> Any:
    return _session(c.net.silent)


@FAM.case("dropped", NET, "the server closes the connection before its banner")
def _dropped(c: Ctx) -> Any:
    return _session(c.net.close_now)


@FAM.case("garbage", NET, "the peer answers bytes that are no SSH banner")
def _garbage(c: Ctx) -> Any:
    return _session(c.net.garbage)
