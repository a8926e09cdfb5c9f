"""The ``s-nail`` CLI (Debian's s-nail, the mailx of today) run as a pack runs it, in batch
mode (``-#``), sending one message through its built-in SMTP client (``mta=smtp://...``,
``smtp-auth=plain``), against the SMTP submission server of the third held-out half, which
answers Postfix's replies (``heldout3/_daemons.py``: 535 on a bad login, 550/552/450 by
recipient, 554 relay denied, 553 sender not owned, 552 over ``SIZE``, 554 spam, and a
second port that greets with 421). The failure is the exit status and s-nail's stderr."""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
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
    Net,
    family,
    net,
    require,
)
from corpus_live.heldout3._daemons import Submission, submission


@dataclass
class Ctx:
    server: Submission
    net: Net
    home: Path  # the pack's HOME (no ~/.mailrc)


def _setup(stack: contextlib.ExitStack, work: Path) -> Ctx:
    require("s-nail")
    home = work / "home"
    home.mkdir()
    return Ctx(submission(stack, work), net(stack), home)


FAM = family(
    "s-nail",
    "the s-nail CLI against an SMTP server answering Postfix's replies (fake)",
    _setup,
    half="heldout19",
)


def _send(
    c: Ctx,
    port: int,
    rcpt: str = "bob@example.org",
    *,
    login: str | None = "app:app-pw",
    host: str = LOOPBACK,
    sender: str = "app@example.org",
    body: bytes = b"The nightly report is attached.\n",
    timeout: float = 10.0,
) -> None:
    auth = ["-S", f"mta=smtp://{login}@{host}:{port}", "-S", "smtp-auth=plain"]
    if login is None:
        auth = ["-S", f"mta=smtp://{host}:{port}", "-S", "smtp-auth=none"]
    argv = [
        "s-nail",
        "-#",
        "-S",
        "v15-compat",
        "-S",
        "nosave",
        *auth,
        "-S",
        f"from={sender}",
        "-S",
        "sendwait",
        "-s",
        "Nightly report",
        rcpt,
    ]
    env = dict(os.environ, HOME=str(c.home), MAILRC="/dev/null")
    subprocess.run(
        argv, input=body, capture_output=True, check=True, timeout=timeout, env=env, cwd=c.home
    )


def _main(c: Ctx) -> int:
    return c.server.port


@FAM.case("bad_password", AUTH, "535 5.7.8 authentication failed")
def _bad_password(c: Ctx) -> Any:
    _send(c, _main(c), login="app:not-the-password")


@FAM.case("relay_denied", AUTH, "554 5.7.1 Relay access denied: no login, outside recipient")
def _relay(c: Ctx) -> Any:
    _send(c, _main(c), "partner@elsewhere.example.net", login=None)


@FAM.case(
    "sender_not_owned",
    AUTH | INT,
    "553 5.7.1 Sender address rejected: not owned by the logged-in user",
)
def _sender(c: Ctx) -> Any:
    _send(c, _main(c), sender="blocked@example.org")


@FAM.case("unknown_recipient", NF, "550 5.1.1 Recipient address rejected: User unknown")
def _unknown(c: Ctx) -> Any:
    _send(c, _main(c), "nobody@example.org")


@FAM.case("mailbox_full", QUOTA, "552 5.2.2 Recipient address rejected: Mailbox full")
def _full(c: Ctx) -> Any:
    _send(c, _main(c), "full@example.org")


@FAM.case(
    "greylisted",
    RL | NET,
    "450 4.2.0 Greylisted: a temporary refusal, try again later (no delay given)",
)
def _grey(c: Ctx) -> Any:
    _send(c, _main(c), "grey@example.org")


@FAM.case(
    "too_large",
    INT | QUOTA,
    "552 5.3.4 Message size exceeds fixed limit (the server's SIZE is 2048)",
)
def _too_large(c: Ctx) -> Any:
    _send(c, _main(c), body=(b"x" * 70 + b"\n") * 80)


@FAM.case("spam", INT, "554 5.7.1 Spam message rejected (the message itself is refused)")
def _spam(c: Ctx) -> Any:
    _send(c, _main(c), body=b"X-Spam: yes\n\nBuy now.\n")


@FAM.case(
    "too_many_connections",
    RL | NET,
    "421 4.7.0 too many connections from 127.0.0.1 at the greeting",
)
def _busy(c: Ctx) -> Any:
    _send(c, c.server.busy_port)


@FAM.case("refused", NET, "nothing listens")
def _refused(c: Ctx) -> Any:
    _send(c, c.net.closed)


@FAM.case("dns", NET, "host does not resolve")
def _dns(c: Ctx) -> Any:
    _send(c, 587, host=UNRESOLVABLE)


@FAM.case(
    "silent",
    TO,
    "server never greets: s-nail has no read timeout, the pack's own deadline expires",
)
def _silent(c: Ctx) -> Any:
    _send(c, c.net.silent, timeout=2)


@FAM.case("dropped", NET, "closed at once")
def _dropped(c: Ctx) -> Any:
    _send(c, c.net.close_now)


@FAM.case("garbage", NET, "the peer answers bytes of no protocol instead of a greeting")
def _garbage(c: Ctx) -> Any:
    _send(c, c.net.garbage)
