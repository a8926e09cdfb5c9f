"""msmtp (Debian's ``msmtp``), the sendmail-like SMTP client, against an SMTP submission
server answering Postfix's replies (reply codes with RFC 3463 enhanced status codes): each
failure is msmtp's sysexits exit status and its stderr (``msmtp: server message: ...``)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    cli,
    family,
    require,
    served,
)
from corpus_live.heldout3._daemons import Submission, submission

Ctx = Served[Submission]


def _start(stack: Any, work: Any) -> Submission:
    require("msmtp")
    return submission(stack, work)


FAM = family("msmtp", "SMTP server answering Postfix's replies", served(_start), half="heldout3")

_MSG = b"From: app@example.org\r\nTo: bob@example.org\r\nSubject: hi\r\n\r\nhello\r\n"


def _send(
    c: Ctx,
    rcpt: str = "bob@example.org",
    *,
    user: str | None = "app",
    password: str = "app-pw",
    sender: str = "app@example.org",
    host: str = "127.0.0.1",
    port: int | None = None,
    message: bytes = _MSG,
    timeout: int = 2,
) -> None:
    argv = [
        "msmtp",
        "--file=/dev/null",
        f"--host={host}",
        f"--port={c.server.port if port is None else port}",
        "--tls=off",
        f"--timeout={timeout}",
        f"--from={sender}",
    ]
    if user:
        argv += ["--auth=plain", f"--user={user}", f"--passwordeval=echo {password}"]
    else:
        argv += ["--auth=off"]
    cli([*argv, rcpt], input=message, timeout=15)


def case(id: str, expect: frozenset[str], why: str) -> Any:
    return FAM.case(id, expect, why)


@case("wrong_password", AUTH, "535 5.7.8 authentication failed (exit 77, EX_NOPERM)")
def _wrong_password(c: Ctx) -> None:
    _send(c, password="wrong-pw")


@case("relay_denied", AUTH, "554 5.7.1 Relay access denied: no login, outside recipient")
def _relay(c: Ctx) -> None:
    _send(c, "carol@example.net", user=None)


@case("sender_not_owned", AUTH, "553 5.7.1 Sender address rejected: not owned by user app")
def _sender(c: Ctx) -> None:
    _send(c, sender="blocked@example.org")


@case("unknown_recipient", NF, "550 5.1.1 Recipient address rejected: User unknown")
def _unknown(c: Ctx) -> None:
    _send(c, "nobody@example.org")


@case(
    "mailbox_full",
    QUOTA | INT,
    "552 5.2.2 Mailbox full: the recipient's storage quota, no retry soon helps",
)
def _full(c: Ctx) -> None:
    _send(c, "full@example.org")


@case("greylisted", RL | NET, "450 4.2.0 Greylisted: a temporary refusal, retry later")
def _grey(c: Ctx) -> None:
    _send(c, "grey@example.org")


@case("too_large", INT, "552 5.3.4 Message size exceeds fixed limit: never passes")
def _too_large(c: Ctx) -> None:
    _send(c, message=_MSG + b"x" * 4000 + b"\r\n")


@case("spam_rejected", INT, "554 5.7.1 Spam message rejected: the content is refused")
def _spam(c: Ctx) -> None:
    _send(c, message=b"X-Spam: yes\r\n" + _MSG)


@case("too_many_connections", RL | NET, "421 4.7.0 too many connections from the client's address")
def _busy(c: Ctx) -> None:
    _send(c, port=c.server.busy_port)


@case("refused", NET, "cannot connect: Connection refused (exit 69/75)")
def _refused(c: Ctx) -> None:
    _send(c, port=c.net.closed)


@case("dns", NET, "cannot locate host: the name does not resolve")
def _dns(c: Ctx) -> None:
    _send(c, host=UNRESOLVABLE, port=25)


@case("silent", TO, "no greeting: msmtp's --timeout=2 expires")
def _silent(c: Ctx) -> None:
    _send(c, port=c.net.silent)


@case("dropped", NET, "the server closed the connection before its greeting")
def _dropped(c: Ctx) -> None:
    _send(c, port=c.net.close_now)
