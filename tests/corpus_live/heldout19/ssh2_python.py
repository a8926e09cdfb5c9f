"""ssh2-python (libssh2's binding) against a real OpenSSH ``sshd`` (Debian's
openssh-server: public keys only, ``root`` with a shell, ``nobody`` SFTP-only), as a pack
would use it: its own socket, ``Session.handshake``, public-key login, SFTP, SCP, a
direct-tcpip channel and a known_hosts check. libssh2 raises one exception class per
return code and no message: the SFTP status is not on the exception."""

from __future__ import annotations

import socket
from dataclasses import dataclass
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
    "ssh2-python",
    "ssh2-python against OpenSSH's sshd (Debian), real",
    served(sshd),
    half="heldout19",
)

Ctx = Served[Sshd]


@dataclass
class _Conn:
    """The socket is kept with the session: libssh2 uses its descriptor, not the object."""

    sock: socket.socket
    session: Any

    def sftp(self) -> Any:
        return self.session.sftp_init()


def _connect(port: int, host: str = LOOPBACK, timeout_ms: int = 0) -> _Conn:
    from ssh2.session import Session  # type: ignore[import-untyped]

    sock = socket.create_connection((host, port), 2)
    sock.settimeout(None)  # blocking, as libssh2 expects: its own timeout governs
    session = Session()
    if timeout_ms:
        session.set_timeout(timeout_ms)
    session.handshake(sock)
    return _Conn(sock, session)


def _session(port: int, host: str = LOOPBACK) -> Any:
    conn = _connect(port, host, timeout_ms=1000)
    conn.sock.close()
    return conn.session


def _login(c: Ctx, user: str = "root", key: Any = None) -> _Conn:
    conn = _connect(c.server.port)
    conn.session.userauth_publickey_fromfile(user, str(key or c.server.key))
    return conn


def _on(c: Ctx, user: str, act: Any) -> Any:
    """Log in as ``user`` and run ``act(session)``, the socket closed afterwards."""
    conn = _login(c, user)
    try:
        return act(conn.session)
    finally:
        conn.sock.close()


def _sftp(c: Ctx, act: Any) -> Any:
    return _on(c, "nobody", lambda session: act(session.sftp_init()))


@FAM.case("key_not_authorized", AUTH, "publickey denied: the key is authorized for no one")
def _key_denied(c: Ctx) -> Any:
    _login(c, key=c.server.other_key).sock.close()


@FAM.case("unknown_user", AUTH, "publickey denied: no such account on the server")
def _unknown_user(c: Ctx) -> Any:
    _login(c, user="deploy-bot").sock.close()


@FAM.case("key_file_missing", INT, "the pack's private key file does not exist")
def _key_missing(c: Ctx) -> Any:
    _login(c, key=c.server.home / "no_such_key").sock.close()


@FAM.case(
    "host_key_changed",
    AUTH | INT,
    "the server's host key does not match the known_hosts entry for it",
)
def _host_key(c: Ctx) -> Any:
    from ssh2 import knownhost  # type: ignore[import-untyped]

    conn = _connect(c.server.port)
    session = conn.session
    known = session.knownhost_init()
    known.readfile(str(c.server.wrong_known_hosts))
    key, _ = session.hostkey()
    mask = knownhost.LIBSSH2_KNOWNHOST_TYPE_PLAIN | knownhost.LIBSSH2_KNOWNHOST_KEYENC_RAW
    try:
        return known.checkp(LOOPBACK.encode(), c.server.port, key, mask)
    finally:
        conn.sock.close()


@FAM.case("sftp_open_missing", NF | INT, "SFTP open of a file that does not exist")
def _open_missing(c: Ctx) -> Any:
    from ssh2.sftp import LIBSSH2_FXF_READ  # type: ignore[import-untyped]

    return _sftp(c, lambda sftp: sftp.open(str(c.server.home / "report.csv"), LIBSSH2_FXF_READ, 0))


@FAM.case("sftp_unlink_missing", NF | INT, "SFTP remove of a file that does not exist")
def _unlink_missing(c: Ctx) -> Any:
    return _sftp(c, lambda sftp: sftp.unlink(str(c.server.home / "old.log")))


@FAM.case("sftp_stat_missing", NF | INT, "SFTP stat of a path that does not exist")
def _stat_missing(c: Ctx) -> Any:
    return _sftp(c, lambda sftp: sftp.stat(str(c.server.home / "inbox")))


@FAM.case("sftp_mkdir_exists", EXISTS | INT, "SFTP mkdir of a directory that exists")
def _mkdir_exists(c: Ctx) -> Any:
    return _sftp(c, lambda sftp: sftp.mkdir(str(c.server.home), 0o755))


@FAM.case(
    "sftp_write_denied",
    AUTH | INT,
    "SFTP create in a directory the login user may not write (permission denied)",
)
def _write_denied(c: Ctx) -> Any:
    from ssh2.sftp import LIBSSH2_FXF_CREAT, LIBSSH2_FXF_WRITE

    flags = LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT
    return _sftp(c, lambda sftp: sftp.open(str(c.server.home / "upload.txt"), flags, 0o644))


@FAM.case("scp_missing", NF | INT, "SCP receive of a file that does not exist")
def _scp_missing(c: Ctx) -> Any:
    return _on(c, "root", lambda s: s.scp_recv2(str(c.server.home / "backup.tar")))


@FAM.case(
    "forward_refused",
    NET,
    "direct-tcpip channel to a port nothing listens on: the server refuses the channel",
)
def _forward(c: Ctx) -> Any:
    return _on(c, "root", lambda s: s.direct_tcpip(LOOPBACK, c.net.closed))


@FAM.case("refused", NET, "nothing listens")
def _refused(c: Ctx) -> Any:
    return _session(c.net.closed)


@FAM.case("dns", NET, "host does not resolve")
def _dns(c: Ctx) -> Any:
    return _session(22, host=UNRESOLVABLE)


@FAM.case("silent", TO, "server never sends its banner: libssh2's session timeout")
def _silent(c: Ctx) -> Any:
    return _session(c.net.silent)


@FAM.case("dropped", NET, "closed at once")
def _dropped(c: Ctx) -> Any:
    return _session(c.net.close_now)


@FAM.case("garbage", NET, "the peer answers bytes of no protocol: no SSH banner")
def _garbage(c: Ctx) -> Any:
    return _session(c.net.garbage)
