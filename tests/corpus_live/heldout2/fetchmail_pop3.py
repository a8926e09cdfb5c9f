"""``fetchmail`` (Debian's fetchmail) checking a POP3 mailbox on a fake server that answers
Dovecot's replies with RFC 2449/3206 response codes (``-ERR [AUTH]``, ``[IN-USE]``,
``[LOGIN-DELAY]``, ``[SYS/TEMP]``, ``[SYS/PERM]``): the pack sees ``CalledProcessError``
with fetchmail's exit status and stderr."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
    LOOPBACK,
    NET,
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    cli,
    family,
    require,
    served,
)
from corpus_live.heldout2._daemons import Pop3, pop3

Ctx = Served[Pop3]

FAM = family(
    "fetchmail",
    "fetchmail 6.4 against a POP3 server (Dovecot's replies)",
    served(pop3),
    half="heldout2",
)


def _check(
    user: str = "app", password: str | None = None, *, port: Any = None, host: str = LOOPBACK
) -> Any:
    def run(ctx: Ctx) -> None:
        require("fetchmail")
        p = ctx.server.port if port is None else port(ctx)
        home: Path = ctx.server.home
        rc = home / "fetchmailrc"
        pw = f"{user}-pw" if password is None else password
        rc.write_text(
            f"poll {host} service {p} protocol pop3 timeout 1\n"
            f"  user '{user}' password '{pw}' sslproto ''\n"
        )
        os.chmod(rc, 0o600)
        cli(
            [
                "fetchmail",
                "--check",
                "--nosyslog",
                "--nodetach",
                "-f",
                str(rc),
                "--pidfile",
                str(home / "fetchmail.pid"),
            ],
            timeout=15,
        )

    return run


FAM.add("wrong_password", AUTH, "-ERR [AUTH] Authentication failed.", _check(password="nope"))
FAM.add("unknown_user", AUTH, "-ERR [AUTH] for a user that does not exist", _check(user="ghost"))
FAM.add(
    "in_use",
    NET | RL | TO,
    "-ERR [IN-USE]: another session holds the mailbox; RFC 3206: try again later",
    _check(user="busy"),
)
FAM.add(
    "login_delay",
    RL,
    "-ERR [LOGIN-DELAY]: RFC 2449: the server's minimum time between logins not elapsed",
    _check(user="slow"),
)
FAM.add(
    "sys_perm",
    AUTH,
    "-ERR [SYS/PERM] account disabled: the server refuses this account for good",
    _check(user="disabled"),
)
# Not cases: fetchmail reports a [SYS/TEMP] at login as "Authorization failure" and one on
# STAT as "client/server protocol error": the response code never reaches its output.
FAM.add("refused", NET, "nothing listens", _check(port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _check(host=UNRESOLVABLE, port=lambda c: 110))
FAM.add(
    "silent",
    TO | NET,
    "server never greets (timeout 1); fetchmail says only 'socket error'",
    _check(port=lambda c: c.net.silent),
)
FAM.add("dropped", NET, "closed before the greeting", _check(port=lambda c: c.net.close_now))
