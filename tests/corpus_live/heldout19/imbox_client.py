"""imbox 0.10 (an IMAP reader, configured with its ``Config`` over the standard library's ``imaplib``) against a real Dovecot
IMAP server (Debian's ``dovecot-imapd``, the third held-out half's: plain text on loopback,
users from a file, ten sessions per user and IP). imbox logs in and selects INBOX when it
is made; it raises ``imaplib.IMAP4.error`` with the server's text (its own for a folder it
cannot select), lets ``imaplib``'s and the socket's exceptions through, and has no timeout
of its own (imaplib is given none), so no silent-server case."""

from __future__ import annotations

import contextlib
import imaplib
from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
    RL,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout3._daemons import Dovecot, dovecot

FAM = family(
    "imbox",
    "imbox against Dovecot IMAP (Debian), real",
    served(dovecot),
    half="heldout19",
)

Ctx = Served[Dovecot]


def _open(
    port: int,
    user: str = "app",
    password: str = "app-pw",
    *,
    host: str = LOOPBACK,
    ssl: bool = False,
    starttls: bool = False,
) -> Any:
    from imbox import Imbox  # type: ignore[import-untyped]
    from imbox.settings import Config  # type: ignore[import-untyped]

    config = Config(
        username=user,
        password=password,
        imap_url=host,
        ssl=ssl,
        ssl_context="",
        starttls=starttls,
        port=port,
    )
    return Imbox(config)


@FAM.case(
    "folder_missing",
    NF,
    "SELECT of a folder that does not exist: Mailbox doesn't exist (imbox's logout on the way"
    " out then fails on CLOSE, the SELECT's error as its context)",
)
def _folder_missing(c: Ctx) -> Any:
    with _open(c.server.port) as box:
        return list(box.messages(folder="Archive"))


@FAM.case(
    "folder_name_invalid",
    INT,
    "the pack's folder name uses '/', not the server's hierarchy separator: Invalid mailbox name",
)
def _folder_invalid(c: Ctx) -> Any:
    with _open(c.server.port) as box:
        return list(box.messages(folder="Archive/2023"))


@FAM.case(
    "bad_date_filter",
    INT,
    "the pack gives a date filter as text where imbox wants a date",
)
def _bad_date(c: Ctx) -> Any:
    with _open(c.server.port) as box:
        return list(box.messages(date__gt="last week"))


@FAM.case(
    "too_many_sessions",
    RL | NET,
    "ten sessions of the user from this IP are open: Maximum number of connections exceeded",
)
def _too_many(c: Ctx) -> Any:
    with contextlib.ExitStack() as held:
        for _ in range(10):
            conn = imaplib.IMAP4(LOOPBACK, c.server.port, timeout=5)
            held.callback(conn.shutdown)
            conn.login("other", "other-pw")
            conn.select()
        return _open(c.server.port, "other", "other-pw")


@FAM.case(
    "tls_to_plain_port",
    INT | NET,
    "ssl=True (imbox's default) against the plain-text IMAP port: the TLS handshake fails",
)
def _tls_plain(c: Ctx) -> Any:
    return _open(c.server.port, ssl=True)


@FAM.case(
    "starttls_unsupported",
    INT | NET,
    "STARTTLS asked of a server that has no TLS configured",
)
def _starttls(c: Ctx) -> Any:
    return _open(c.server.port, starttls=True)


@FAM.case("refused", NET, "nothing listens")
def _refused(c: Ctx) -> Any:
    return _open(c.net.closed)


@FAM.case("dns", NET, "host does not resolve")
def _dns(c: Ctx) -> Any:
    return _open(143, host=UNRESOLVABLE)


@FAM.case("dropped", NET, "closed at once")
def _dropped(c: Ctx) -> Any:
    return _open(c.net.close_now)


@FAM.case("garbage", NET, "the peer answers bytes of no protocol instead of a greeting")
def _garbage(c: Ctx) -> Any:
    return _open(c.net.garbage)


# Last: Dovecot delays every login from the IP after a failed one (its auth penalty).
@FAM.case("wrong_password", AUTH, "NO [AUTHENTICATIONFAILED] Authentication failed")
def _wrong_password(c: Ctx) -> Any:
    return _open(c.server.port, password="not-the-password")
