"""imap_tools (a high-level IMAP client over imaplib) against a real Dovecot 2.3 IMAP server
(Debian's ``dovecot-imapd``): a 2 KiB quota, a disabled account (``nologin`` with a reason),
an account allowed only from another network, one IMAP session per user and IP. Dovecot's
tagged ``NO`` replies carry RFC 5530 response codes (``[AUTHENTICATIONFAILED]``,
``[NONEXISTENT]``, ``[ALREADYEXISTS]``, ``[OVERQUOTA]``, ``[LIMIT]``...); imap_tools raises
one ``UnexpectedCommandStatusError`` subclass per command (``MailboxLoginError``,
``MailboxFolderSelectError``...) with the reply on it; imaplib's own errors (a ``BAD``, the
transport) pass through."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout7._daemons import MailServer, dovecot_mail

Ctx = Served[MailServer]

FAM = family(
    "imap-tools",
    "Dovecot 2.3 IMAP (Debian dovecot-imapd), real",
    served(dovecot_mail),
    half="heldout7",
)


def _box(host: str, port: int, timeout: float = 1.0) -> Any:
    from imap_tools import MailBoxUnencrypted

    return MailBoxUnencrypted(host, port, timeout=timeout)


def _as(
    op: Callable[[Any], Any], user: str = "app", password: str = "app-pw"
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        box = _box(LOOPBACK, c.server.imap)
        try:
            box.login(user, password)
            op(box)
        finally:
            box.client.shutdown()

    return run


def _second_session(c: Ctx) -> None:
    first = _box(LOOPBACK, c.server.imap).login("single", "single-pw")
    try:
        _box(LOOPBACK, c.server.imap).login("single", "single-pw")
    finally:
        first.logout()


def _append_big(box: Any) -> None:
    msg = b"From: a@example.org\r\nSubject: big\r\n\r\n" + b"x" * 8192 + b"\r\n"
    box.append(msg, "INBOX")


def _copy_missing(box: Any) -> None:
    uids = box.uids()
    box.copy(uids[:1], "Archive2019")


def _transport(port: Callable[[Ctx], int], host: str = LOOPBACK) -> Callable[[Ctx], None]:
    return lambda c: _box(host, port(c)).login("app", "app-pw")


FAM.add(
    "wrong_password",
    AUTH,
    "MailboxLoginError: NO [AUTHENTICATIONFAILED] Authentication failed.",
    _as(lambda b: None, password="bad"),
)
FAM.add(
    "unknown_user",
    AUTH,
    "MailboxLoginError: NO [AUTHENTICATIONFAILED] for a user that does not exist",
    _as(lambda b: None, user="ghost", password="ghost-pw"),
)
FAM.add(
    "disabled_account",
    AUTH,
    "MailboxLoginError: NO [CONTACTADMIN] Suspended (the account is disabled: nologin)",
    _as(lambda b: None, user="disabled", password="disabled-pw"),
)
FAM.add(
    "wrong_network",
    AUTH,
    "MailboxLoginError: NO [AUTHENTICATIONFAILED] (the account may log in only from 10.9.0.0/16: allow_nets)",
    _as(lambda b: None, user="remote", password="remote-pw"),
)
FAM.add(
    "session_limit",
    RL | QUOTA,
    "a second session: Maximum number of connections from user+IP exceeded (mail_max_userip_connections=1)",
    _second_session,
)
FAM.add(
    "select_missing",
    NF,
    "MailboxFolderSelectError: NO Mailbox doesn't exist",
    _as(lambda b: b.folder.set("Receipts")),
)
FAM.add(
    "rename_missing",
    NF,
    "MailboxFolderRenameError: NO [NONEXISTENT] the folder to rename is not there",
    _as(lambda b: b.folder.rename("Old", "New")),
)
FAM.add(
    "delete_missing",
    NF,
    "MailboxFolderDeleteError: NO [NONEXISTENT] the folder to delete is not there",
    _as(lambda b: b.folder.delete("Gone")),
)
FAM.add(
    "create_exists",
    EXISTS,
    "MailboxFolderCreateError: NO [ALREADYEXISTS] Mailbox already exists (INBOX)",
    _as(lambda b: b.folder.create("INBOX")),
)
FAM.add(
    "copy_missing_folder",
    NF,
    "MailboxCopyError: NO [TRYCREATE] the destination folder does not exist",
    _as(_copy_missing),
)
FAM.add(
    "over_quota",
    QUOTA,
    "MailboxAppendError: NO [OVERQUOTA] Quota exceeded (8 KiB into a 2 KiB quota)",
    _as(_append_big),
)
FAM.add(
    "bad_criteria",
    INT,
    "BAD Error in IMAP command SEARCH: Unknown argument (the pack's own criteria)",
    _as(lambda b: b.uids("SINCEFOREVER banana")),
)
FAM.add("refused", NET, "nothing listens", _transport(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve (.invalid)", _transport(lambda c: 143, UNRESOLVABLE))
FAM.add("silent", TO, "no greeting (timeout 1 s)", _transport(lambda c: c.net.silent))
FAM.add("dropped", NET, "closed before the greeting", _transport(lambda c: c.net.close_now))
