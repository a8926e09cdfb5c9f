"""The ``swaks`` SMTP CLI (Debian's swaks) against a real SMTP server (aiosmtpd)."""

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
    cli,
    family,
    served,
)
from corpus_live.servers import Smtp, smtp

Ctx = Served[Smtp]


FAM = family("swaks", "swaks against aiosmtpd, real", served(smtp), half="visible")


def _swaks(
    port: Any,
    *,
    to: str = "bob@example.org",
    auth: tuple[str, str] | None = None,
    host: str = LOOPBACK,
    body: str = "hello",
) -> Any:
    def run(ctx: Ctx) -> None:
        argv = [
            "swaks",
            "--server",
            f"{host}:{port(ctx)}",
            "--from",
            "app@example.org",
            "--to",
            to,
            "--timeout",
            "2",
            "--body",
            body,
            "--silent",
            "2",
        ]
        if auth:
            argv += ["--auth", "LOGIN", "--auth-user", auth[0], "--auth-password", auth[1]]
        cli(argv, timeout=10)

    return run


OPEN = lambda c: c.server.open_port  # noqa: E731
FAM.add(
    "bad_password",
    AUTH,
    "535 authentication failed",
    _swaks(lambda c: c.server.port, auth=("app", "nope")),
)
FAM.add("auth_required", AUTH, "530 authentication required", _swaks(lambda c: c.server.port))
FAM.add("user_unknown", NF, "550 5.1.1 user unknown", _swaks(OPEN, to="nobody@example.org"))
FAM.add("relay_denied", AUTH, "554 relay access denied", _swaks(OPEN, to="relay@elsewhere.test"))
FAM.add("greylisted", RL, "450 greylisted", _swaks(OPEN, to="greylist@example.org"))
FAM.add("throttled", RL, "421 too many messages", _swaks(OPEN, to="throttle@example.org"))
FAM.add("spam", INT, "554 rejected as spam", _swaks(OPEN, body="SPAM"))
FAM.add("refused", NET, "connection refused", _swaks(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _swaks(lambda c: 25, host=UNRESOLVABLE))
FAM.add("silent", TO, "no greeting within --timeout", _swaks(lambda c: c.net.silent))
