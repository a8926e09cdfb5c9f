"""The ``mpop`` CLI (Debian's ``mpop``, msmtp's sibling: a POP3 retriever) run as a pack runs
it, command-line settings only (``--host``, no configuration file), against a real Dovecot 2.3
POP3 server (Debian's ``dovecot-pop3d``): a disabled account (``nologin``), an account allowed
only from another network, one POP3 session per user and IP. The failure is the exit status
(sysexits: ``EX_NOPERM``, ``EX_UNAVAILABLE``, ``EX_TEMPFAIL``...) and ``mpop: ...`` on stderr,
the server's ``-ERR`` reply quoted in it."""

from __future__ import annotations

import contextlib
import os
import poplib
from collections.abc import Callable
from pathlib import Path

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
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
from corpus_live.heldout7._daemons import MailServer, dovecot_mail

Ctx = Served[MailServer]


def _start(stack: contextlib.ExitStack, work: Path) -> MailServer:
    require("mpop")
    return dovecot_mail(stack, work)


FAM = family(
    "mpop",
    "the mpop CLI against Dovecot 2.3 POP3 (Debian dovecot-pop3d), real",
    served(_start),
    half="heldout7",
)


def _mpop(
    *extra: str,
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    delivery: str | None = None,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        out = c.server.mail.parent / "fetched"
        out.mkdir(exist_ok=True)
        mbox = out / f"{user}.mbox"
        mbox.touch()
        cli(
            [
                "mpop",
                f"--host={host}",
                f"--port={c.server.pop3 if port is None else port(c)}",
                "--tls=off",
                "--auth=user",
                f"--user={user}",
                f"--passwordeval=echo {password}",
                "--timeout=1",
                "--keep=on",
                f"--uidls-file={out / (user + '.uidls')}",
                f"--delivery={delivery or 'mbox,' + str(mbox)}",
                "--half-quiet",
                *extra,
            ],
            timeout=10,
        )

    return run


def _second_session(c: Ctx) -> None:
    first = poplib.POP3(LOOPBACK, c.server.pop3, timeout=2)
    try:
        first.user("single")
        first.pass_("single-pw")
        _mpop(user="single", password="single-pw")(c)
    finally:
        with contextlib.suppress(OSError, poplib.error_proto):
            first.quit()


FAM.add(
    "wrong_password",
    AUTH,
    "-ERR [AUTH] Authentication failed. (mpop: authentication failed, exit 77)",
    _mpop(password="bad"),
)
FAM.add(
    "unknown_user",
    AUTH,
    "-ERR [AUTH] Authentication failed. for a user that does not exist",
    _mpop(user="ghost", password="ghost-pw"),
)
FAM.add(
    "disabled_account",
    AUTH,
    "-ERR [AUTH] Suspended: the account is disabled (nologin), exit 77",
    _mpop(user="disabled", password="disabled-pw"),
)
FAM.add(
    "wrong_network",
    AUTH,
    "-ERR [AUTH] Authentication failed.: the account may log in only from 10.9.0.0/16",
    _mpop(user="remote", password="remote-pw"),
)
FAM.add(
    "session_limit",
    RL | QUOTA,
    "-ERR [IN-USE] Maximum number of connections from user+IP exceeded (another session holds it; mpop says authentication failed, exit 77)",
    _second_session,
)
FAM.add(
    "auth_method",
    AUTH | INT,
    "POP3 server does not support authentication method CRAM-MD5 (the pack's --auth, exit 69)",
    _mpop("--auth=cram-md5"),
)
FAM.add(
    "no_stls",
    INT,
    "the POP3 server does not support TLS via the STLS command (the pack's --tls-starttls)",
    _mpop("--tls=on", "--tls-starttls=on", "--tls-certcheck=off"),
)
FAM.add(
    "delivery_missing_dir",
    INT,
    "cannot change to the maildir: No such file or directory (the pack's --delivery, exit 74)",
    _mpop(delivery="maildir," + os.devnull + "-corpus44/none"),
)
FAM.add(
    "bad_option",
    INT,
    "unrecognized option '--no-such-flag' (the pack's own argv)",
    _mpop("--no-such-flag"),
)
FAM.add("refused", NET, "cannot connect: nothing listens", _mpop(port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "cannot locate host no-such-host.invalid",
    _mpop(host=UNRESOLVABLE, port=lambda c: 110),
)
FAM.add(
    "silent",
    TO,
    "network read error: the operation timed out (no greeting, --timeout=1)",
    _mpop(port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "POP3 server sent an empty reply: closed at once",
    _mpop(port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET | INT,
    "POP3 server sent an invalid reply: bytes of no protocol",
    _mpop(port=lambda c: c.net.garbage),
)
