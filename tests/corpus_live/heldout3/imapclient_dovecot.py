"""imapclient against a real Dovecot 2.3 IMAP server (Debian's ``dovecot-imapd``): tagged
``NO``/``BAD`` replies with RFC 5530 response codes (``[AUTHENTICATIONFAILED]``,
``[NONEXISTENT]``, ``[ALREADYEXISTS]``, ``[OVERQUOTA]``), raised as imaplib's errors."""

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
    QUOTA,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout3._daemons import Dovecot, dovecot

Ctx = Served[Dovecot]

FAM = family("imapclient", "Dovecot 2.3 IMAP (Debian), real", served(dovecot), half="heldout3")


def _client(host: str, port: int, timeout: float = 1) -> Any:
    from imapclient import IMAPClient

    return IMAPClient(host, port=port, ssl=False, timeout=timeout)


def _as(op: Any, user: str = "app", password: str = "app-pw", timeout: float = 1) -> Any:
    def run(c: Ctx) -> Any:
        client = _client(LOOPBACK, c.server.port, timeout)
        try:
            client.login(user, password)
            return op(client)
        finally:
            client.shutdown()

    return run


def _create_twice(client: Any) -> Any:
    import imaplib

    with contextlib.suppress(imaplib.IMAP4.error):
        client.create_folder("Projects")  # the first run creates it
    return client.create_folder("Projects")


def _big(n: int) -> bytes:
    return b"From: a@example.org\r\nSubject: big\r\n\r\n" + b"x" * n + b"\r\n"


FAM.add(
    "select_missing",
    NF,
    "NO Mailbox doesn't exist: the folder to select is not there",
    _as(lambda c: c.select_folder("Archive2019")),
)
FAM.add(
    "rename_missing",
    NF,
    "NO [NONEXISTENT] Mailbox doesn't exist",
    _as(lambda c: c.rename_folder("Nope", "Other")),
)
FAM.add(
    "delete_missing",
    NF,
    "NO [NONEXISTENT] delete of a folder that does not exist",
    _as(lambda c: c.delete_folder("Nope")),
)
FAM.add(
    "create_exists",
    EXISTS,
    "NO [ALREADYEXISTS] Mailbox already exists",
    _as(_create_twice),
)
FAM.add(
    "delete_inbox",
    INT,
    "NO INBOX can't be deleted: a rule of the protocol, no retry helps",
    _as(lambda c: c.delete_folder("INBOX")),
)
FAM.add(
    "over_quota",
    QUOTA,
    "NO [OVERQUOTA] Quota exceeded (mailbox for user is full)",
    _as(lambda c: c.append("INBOX", _big(4000))),
)
FAM.add(
    "bad_search",
    INT,
    "BAD Error in IMAP command SEARCH: Unknown argument (the pack's query)",
    _as(lambda c: (c.select_folder("INBOX"), c.search(["NOSUCHKEY", "x"]))),
)
FAM.add(
    "no_mailbox_selected",
    INT,
    "BAD No mailbox selected: a FETCH before SELECT (the pack's bug)",
    _as(lambda c: c.fetch([1], ["FLAGS"])),
)

# Last: after a failed login Dovecot delays every later login from the address (its
# auth penalty, 2 s doubling up to 15 s), so the cases that fail a login come last.
FAM.add(
    "wrong_password",
    AUTH,
    "NO [AUTHENTICATIONFAILED] Authentication failed.",
    _as(lambda c: None, password="wrong-pw", timeout=20),
)
FAM.add(
    "unknown_user",
    AUTH,
    "NO [AUTHENTICATIONFAILED] for a user that does not exist",
    _as(lambda c: None, user="ghost", password="x", timeout=20),
)


def _transport(port: Any, host: str = LOOPBACK) -> Any:
    def run(c: Ctx) -> Any:
        _client(host, port(c)).login("app", "app-pw")

    return run


FAM.add("refused", NET, "nothing listens", _transport(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _transport(lambda c: 143, UNRESOLVABLE))
FAM.add("silent", TO, "no greeting (timeout 1)", _transport(lambda c: c.net.silent))
FAM.add("dropped", NET, "closed before the greeting", _transport(lambda c: c.net.close_now))
