"""aiosmtplib against a real SMTP server (aiosmtpd) on loopback answering real reply codes."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
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
from corpus_live.servers import Smtp, smtp

Ctx = Served[Smtp]


FAM = family("aiosmtplib", "aiosmtpd 1.4 SMTP server, real", served(smtp), half="visible")


def _send(
    port: Any,
    *,
    rcpt: str = "bob@example.org",
    user: str | None = None,
    password: str = "",
    body: str = "hello",
    host: str = LOOPBACK,
) -> Any:
    def run(ctx: Ctx) -> Any:
        import aiosmtplib

        p = port(ctx) if callable(port) else port
        msg = f"From: app@example.org\r\nTo: {rcpt}\r\nSubject: t\r\n\r\n{body}\r\n"
        return aiosmtplib.send(
            msg,
            sender="app@example.org",
            recipients=[rcpt],
            hostname=host,
            port=p,
            username=user,
            password=password or None,
            start_tls=False,
            use_tls=False,
            timeout=1,
        )

    return run


OPEN = lambda c: c.server.open_port  # noqa: E731
AUTHP = lambda c: c.server.port  # noqa: E731
FAM.add("refused", NET, "nothing listens", _send(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _send(25, host=UNRESOLVABLE))
FAM.add("silent", TO, "server never greets", _send(lambda c: c.net.silent))
FAM.add("dropped", NET, "closed at once", _send(lambda c: c.net.close_now))
FAM.add("garbage", NET, "not SMTP", _send(lambda c: c.net.garbage))
FAM.add(
    "bad_password",
    AUTH,
    "535 5.7.8 authentication credentials invalid",
    _send(AUTHP, user="app", password="nope"),
)
FAM.add("auth_required", AUTH, "530 5.7.0 authentication required", _send(AUTHP))
FAM.add("user_unknown", NF, "550 5.1.1 user unknown", _send(OPEN, rcpt="nobody@example.org"))
FAM.add(
    "relay_denied", AUTH, "554 5.7.1 relay access denied", _send(OPEN, rcpt="relay@elsewhere.test")
)
FAM.add(
    "greylisted",
    RL,
    "450 4.2.0 greylisted: try again later",
    _send(OPEN, rcpt="greylist@example.org"),
)
FAM.add(
    "mailbox_full",
    RL | INT,
    "452 4.2.2 mailbox full (transient, the recipient's)",
    _send(OPEN, rcpt="full@example.org"),
)
FAM.add(
    "too_many_msgs",
    RL,
    "421 4.7.0 too many messages, try again later",
    _send(OPEN, rcpt="throttle@example.org"),
)
FAM.add(
    "rate_limit", RL, "450 4.7.1 rate limit exceeded", _send(OPEN, rcpt="ratelimit@example.org")
)
FAM.add(
    "policy",
    INT | AUTH,
    "550 5.7.1 rejected by local policy",
    _send(OPEN, rcpt="blocked@example.org"),
)
FAM.add("spam", INT, "554 5.7.1 rejected as spam: the content", _send(OPEN, body="SPAM"))
FAM.add("too_big", INT, "552 message size exceeds limit", _send(OPEN, body="x" * 9000))
FAM.add("moved", NF, "551 5.1.6 user has moved", _send(OPEN, rcpt="moved@example.org"))
