"""ftputil (a high-level FTP client on ftplib) against a real ProFTPD 1.3.8 (Debian's
``proftpd-basic``): FTP reply codes (530, 550, 552...) with ProFTPD's own texts, raised as
ftputil's ``PermanentError``/``TemporaryError`` (``errno`` the reply code)."""

from __future__ import annotations

import contextlib
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout3._daemons import Proftpd, proftpd

Ctx = Served[Proftpd]

FAM = family("ftputil", "ProFTPD 1.3.8 (Debian), real", served(proftpd), half="heldout3")


def _host(host: str, port: int, user: str = "app", password: str = "app-pw") -> Any:
    import ftplib

    import ftputil
    import ftputil.session

    class TimedFTP(ftplib.FTP):
        def __init__(self, *args: Any, **kw: Any) -> None:
            super().__init__(*args, timeout=2, **kw)  # the control connection's timeout

    factory = ftputil.session.session_factory(base_class=TimedFTP, port=port, use_passive_mode=True)
    return ftputil.FTPHost(host, user, password, session_factory=factory)


def _as(op: Any, user: str = "app", password: str = "app-pw") -> Any:
    def run(c: Ctx) -> Any:
        with _host(LOOPBACK, c.server.port, user, password) as h:
            return op(h)

    return run


def _upload_big(h: Any) -> Any:
    with h.open("big.bin", "wb") as f:
        f.write(b"\0" * 64 * 1024)


def _second_session(c: Ctx) -> Any:
    with contextlib.ExitStack() as held:
        for _ in range(3):  # ProFTPD admits two sessions per user (ftputil uses a second)
            held.enter_context(_host(LOOPBACK, c.server.port, "solo", "solo-pw"))


def _mkdir_twice(h: Any) -> Any:
    with contextlib.suppress(Exception):
        h.mkdir("made")
    return h.mkdir("made")


FAM.add("wrong_password", AUTH, "530 Login incorrect.", _as(lambda h: None, password="x"))
FAM.add("unknown_user", AUTH, "530 Login incorrect. (no such user)", _as(lambda h: None, "ghost"))
FAM.add(
    "download_missing",
    NF,
    "550 nope.txt: No such file or directory",
    _as(lambda h: h.download("nope.txt", "/dev/null")),
)
FAM.add(
    "chdir_missing", NF, "550 nodir: No such file or directory", _as(lambda h: h.chdir("nodir"))
)
FAM.add("mkdir_exists", EXISTS, "550 made: File exists", _as(_mkdir_twice))
FAM.add(
    "write_denied",
    AUTH,
    "550 locked/new: Permission denied (a directory the user may not write)",
    _as(lambda h: h.mkdir("locked/new")),
)
FAM.add(
    "delete_denied",
    AUTH,
    "550 ... : Operation not permitted (a <Limit DELE> for this user)",
    _as(lambda h: h.remove("docs/readme.txt"), "solo", "solo-pw"),
)
FAM.add(
    "rmdir_not_empty",
    INT,
    "directory not empty (ftputil checks before it sends RMD)",
    _as(lambda h: h.rmdir("full")),
)
FAM.add(
    "too_large",
    INT,
    "552 transfer aborted: the file is over MaxStoreFileSize, it never passes",
    _as(_upload_big),
)
FAM.add(
    "too_many_sessions",
    RL | NET,
    "530 Sorry, the maximum number of clients (2) for this user are already connected",
    _second_session,
)


def _transport(port: Any, host: str = LOOPBACK) -> Any:
    def run(c: Ctx) -> Any:
        with _host(host, port(c)):
            pass

    return run


FAM.add("refused", NET, "nothing listens", _transport(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _transport(lambda c: 21, UNRESOLVABLE))
FAM.add("silent", TO, "no greeting (timeout 2)", _transport(lambda c: c.net.silent))
FAM.add("dropped", NET, "closed before the greeting", _transport(lambda c: c.net.close_now))
