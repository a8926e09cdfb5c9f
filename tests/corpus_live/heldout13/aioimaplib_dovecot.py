"""aioimaplib (an asyncio IMAP4rev1 client) against a real Dovecot 2.3 IMAP server (Debian's
``dovecot-imapd``): a 2 KiB quota, a disabled account (``nologin`` with a reason), an account
allowed only from another network, one IMAP session per user and IP. Nothing is faked but the
transport failures. aioimaplib does not raise on a tagged ``NO``/``BAD``: it returns a
``Response(result, lines)``, so the pack raises the library's own ``aioimaplib.Error`` with the
reply's text (Dovecot's RFC 5530 response codes on it), as aioimaplib itself does for a refused
greeting. Its own checks (state, arguments) and ``asyncio.wait_for`` deadlines pass through."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
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
    "aioimaplib",
    "Dovecot 2.3 IMAP (Debian dovecot-imapd), real",
    served(dovecot_mail),
    half="heldout13",
)


def _checked(resp: Any, what: str) -> Any:
    """What a pack does with aioimaplib's answer: anything but ``OK`` is an error."""
    import aioimaplib

    if resp.result != "OK":
        text = " ".join(
            line.decode(errors="replace") if isinstance(line, bytes) else str(line)
            for line in resp.lines
        )
        raise aioimaplib.Error(f"IMAP {what} failed: {resp.result} {text}")
    return resp


async def _open(host: str, port: int, timeout: float = 1.0) -> Any:
    import aioimaplib

    client = aioimaplib.IMAP4(host=host, port=port, timeout=timeout)
    await client.wait_hello_from_server()
    return client


async def _bye(client: Any) -> None:
    """Log out, ignoring a session the server already ended."""
    import asyncio

    import aioimaplib

    with contextlib.suppress(aioimaplib.AioImapException, OSError, asyncio.TimeoutError):
        await client.logout()


def _as(
    op: Callable[[Any], Awaitable[Any]], user: str = "app", password: str = "app-pw"
) -> Callable[[Ctx], Awaitable[None]]:
    async def run(c: Ctx) -> None:
        client = await _open(LOOPBACK, c.server.imap)
        try:
            _checked(await client.login(user, password), "LOGIN")
            await op(client)
        finally:
            await _bye(client)

    return run


async def _nothing(client: Any) -> None:
    _checked(await client.noop(), "NOOP")


FAM.add(
    "wrong_password",
    AUTH,
    "LOGIN: NO [AUTHENTICATIONFAILED], the password is wrong",
    _as(_nothing, password="not-it"),
)
FAM.add(
    "disabled_account",
    AUTH,
    "LOGIN: NO [CONTACTADMIN] Suspended, the account is disabled (nologin)",
    _as(_nothing, user="disabled", password="disabled-pw"),
)


async def _second_session(c: Ctx) -> None:
    first = await _open(LOOPBACK, c.server.imap)
    try:
        _checked(await first.login("single", "single-pw"), "LOGIN")
        second = await _open(LOOPBACK, c.server.imap)
        try:
            _checked(await second.login("single", "single-pw"), "LOGIN")
            _checked(await second.select("INBOX"), "SELECT")
        finally:
            await _bye(second)
    finally:
        await _bye(first)


FAM.add(
    "session_limit",
    RL | NET,
    "a second session of one user from one IP: mail_max_userip_connections=1 exceeded",
    _second_session,
)


async def _select_missing(client: Any) -> None:
    _checked(await client.select("Archive2019"), "SELECT")


FAM.add(
    "no_mailbox",
    NF,
    "SELECT: NO Mailbox doesn't exist",
    _as(_select_missing),
)


async def _create_inbox(client: Any) -> None:
    _checked(await client.create("INBOX"), "CREATE")


FAM.add(
    "mailbox_exists",
    EXISTS,
    "CREATE: NO [ALREADYEXISTS] Mailbox already exists",
    _as(_create_inbox),
)


async def _copy_to_missing(client: Any) -> None:
    _checked(await client.select("INBOX"), "SELECT")
    _checked(await client.copy("1", "Nowhere"), "COPY")


FAM.add(
    "copy_target_missing",
    NF,
    "COPY: NO [TRYCREATE] the target mailbox doesn't exist",
    _as(_copy_to_missing),
)


async def _append_big(client: Any) -> None:
    body = b"From: a@example.org\r\nSubject: big\r\n\r\n" + b"x" * 6000 + b"\r\n"
    _checked(await client.append(body, mailbox="INBOX"), "APPEND")


FAM.add(
    "over_quota",
    QUOTA,
    "APPEND: NO [OVERQUOTA] Quota exceeded (the 2 KiB storage quota)",
    _as(_append_big),
)


async def _delete_inbox(client: Any) -> None:
    _checked(await client.delete("INBOX"), "DELETE")


FAM.add(
    "delete_inbox",
    INT,
    "DELETE: NO, INBOX can't be deleted (the pack's request is impossible)",
    _as(_delete_inbox),
)


async def _bad_search(client: Any) -> None:
    _checked(await client.select("INBOX"), "SELECT")
    _checked(await client.search("SINCE", "yesterday"), "SEARCH")


FAM.add(
    "bad_search",
    INT,
    "SEARCH: BAD, the pack's date criterion is malformed",
    _as(_bad_search),
)


async def _fetch_unselected(client: Any) -> None:
    _checked(await client.fetch("1", "(FLAGS)"), "FETCH")


FAM.add(
    "wrong_state",
    INT,
    "aioimaplib's own check: FETCH is illegal before a mailbox is selected",
    _as(_fetch_unselected),
)


async def _crlf(client: Any) -> None:
    _checked(await client.select("INBOX\r\nA1 DELETE Trash"), "SELECT")


FAM.add(
    "crlf_argument",
    INT,
    "aioimaplib refuses CR/LF in a command argument (the pack's input)",
    _as(_crlf),
)


def _transport(port: Callable[[Ctx], int], host: str = LOOPBACK) -> Callable[[Ctx], Any]:
    async def run(c: Ctx) -> None:
        client = await _open(host, port(c))
        _checked(await client.login("app", "app-pw"), "LOGIN")

    return run


FAM.add("refused", NET, "nothing listens", _transport(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _transport(lambda c: 143, UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "no greeting within the client's 1 s timeout (asyncio.wait_for)",
    _transport(lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET | TO,
    "closed at once, before any greeting: aioimaplib misses the end, its 1 s wait expires",
    _transport(lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET | TO,
    "a greeting of no protocol kills aioimaplib's reader task: its 1 s wait expires",
    _transport(lambda c: c.net.garbage),
)
