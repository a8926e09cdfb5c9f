"""Red Mail (``redmail.EmailSender``: an email sending library over ``smtplib``) against an
SMTP submission server answering Postfix's replies (heldout3's fake: Postfix's greeting,
``SIZE 2048``, AUTH PLAIN/LOGIN for ``app``/``app-pw``, Postfix's reject texts for relay,
sender ownership, unknown and full mailboxes, greylisting, size and content; a second port
greeting with Postfix's ``421`` for too many connections). The transport failures are the
shared ones. ``smtplib``'s exceptions and Red Mail's own checks reach the pack."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    AUTH,
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
from corpus_live.heldout3._daemons import Submission, submission

Ctx = Served[Submission]

FAM = family(
    "redmail",
    "an SMTP submission server answering Postfix's replies (fake)",
    served(submission),
    half="heldout18",
)


def _send(
    port: Callable[[Ctx], int] = lambda c: c.server.port,
    *,
    host: str = LOOPBACK,
    username: str | None = "app",
    password: str | None = "app-pw",
    sender: str = "billing@example.org",
    to: str = "ada@example.com",
    subject: str | None = "Your invoice",
    text: str = "Your invoice for October is attached.",
    starttls: bool = False,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        from redmail.email.sender import EmailSender

        settings: dict[str, Any] = {"username": username, "password": password}
        email = EmailSender(host=host, port=port(c), use_starttls=starttls, timeout=1, **settings)
        email.send(subject=subject, sender=sender, receivers=[to], text=text)

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "535 5.7.8 Error: authentication failed",
    _send(password="not-it"),
)
FAM.add(
    "relay_denied",
    AUTH,
    "no login: 554 5.7.1 Relay access denied for an outside recipient",
    _send(username=None, password=None),
)
FAM.add(
    "sender_not_owned",
    AUTH | INT,
    "553 5.7.1 Sender address rejected: not owned by user app",
    _send(sender="blocked@example.org"),
)
FAM.add(
    "unknown_recipient",
    NF,
    "550 5.1.1 Recipient address rejected: User unknown in virtual mailbox table",
    _send(to="nobody@example.org"),
)
FAM.add(
    "mailbox_full",
    QUOTA | INT,
    "552 5.2.2 Recipient address rejected: Mailbox full",
    _send(to="full@example.org"),
)
FAM.add(
    "greylisted",
    RL | NET,
    "450 4.2.0 Recipient address rejected: Greylisted (try again later)",
    _send(to="grey@example.org"),
)
FAM.add(
    "message_too_large",
    INT,
    "the pack's 6 KB body exceeds SIZE 2048: 552 5.3.4 Message size exceeds fixed limit",
    _send(text="Your invoice for October. " * 250),
)
FAM.add(
    "spam_rejected",
    INT,
    "554 5.7.1 Spam message rejected after DATA",
    _send(text="X-Spam: yes\nCheap invoices!"),
)
FAM.add(
    "too_many_connections",
    RL | NET,
    "the server greets with 421 4.7.0 too many connections from 127.0.0.1",
    _send(lambda c: c.server.busy_port),
)
FAM.add(
    "starttls_not_offered",
    INT,
    "Red Mail's default STARTTLS against a server that offers none: SMTPNotSupportedError",
    _send(starttls=True),
)
FAM.add(
    "missing_subject",
    INT,
    "the pack sends with no subject: Red Mail's own ValueError",
    _send(subject=None),
)
FAM.add("refused", NET, "nothing listens", _send(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve (.invalid)", _send(lambda c: 587, host=UNRESOLVABLE))
FAM.add("silent", TO, "the server never greets (timeout=1)", _send(lambda c: c.net.silent))
FAM.add("dropped", NET, "the peer closes the connection at once", _send(lambda c: c.net.close_now))
FAM.add("garbage", NET, "the peer answers bytes that are not SMTP", _send(lambda c: c.net.garbage))
