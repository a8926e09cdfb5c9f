"""isync's ``mbsync`` CLI (Debian's ``isync``) run as a pack runs it (a config file written
per run, a local maildir under a scratch directory, ``Timeout 1``, no TLS on loopback, a
subprocess deadline) against a real Dovecot 2.3 IMAP server (Debian's ``dovecot-imapd``: a
2 KiB quota for ``app``, a disabled account, an account only allowed from another network,
one session per user and IP). The failure is the exit status and mbsync's messages on stderr
quoting the server's tagged replies; mbsync's own checks of its config and channels fail the
same way before any connection. Nothing is faked."""

from __future__ import annotations

import contextlib
import imaplib
import tempfile
from collections.abc import Callable
from pathlib import Path

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
    cli,
    family,
    require,
    served,
)
from corpus_live.heldout7._daemons import MailServer, dovecot_mail

Ctx = Served[MailServer]


def _start(stack: contextlib.ExitStack, work: Path) -> MailServer:
    require("mbsync")
    return dovecot_mail(stack, work)


FAM = family(
    "mbsync",
    "the mbsync CLI (isync) against Dovecot IMAP (Debian), real",
    served(_start),
    half="heldout10",
)


def _config(
    local: Path,
    *,
    port: int,
    host: str,
    user: str,
    password: str,
    far: str,
    create: str,
    sync: str,
    ssl: str,
) -> str:
    return (
        "IMAPAccount acct\n"
        f"Host {host}\n"
        f"Port {port}\n"
        f"User {user}\n"
        f"Pass {password}\n"
        f"SSLType {ssl}\n"
        "AuthMechs LOGIN\n"
        "Timeout 1\n"
        "\n"
        "IMAPStore remote\n"
        "Account acct\n"
        "\n"
        "MaildirStore local\n"
        f"Path {local}/\n"
        f"Inbox {local}/INBOX\n"
        "\n"
        "Channel mail\n"
        f"Far :remote:{far}\n"
        "Near :local:\n"
        f"Create {create}\n"
        f"Sync {sync}\n"
        "SyncState *\n"
    )


def _mbsync(
    *,
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    far: str = "INBOX",
    create: str = "Near",
    sync: str = "Pull",
    ssl: str = "None",
    channel: str = "mail",
    edit: Callable[[str], str] | None = None,
    prepare: Callable[[Path], None] | None = None,
    config_name: str = "mbsyncrc",
    deadline: float = 10.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        with tempfile.TemporaryDirectory(prefix="corpus44-mbsync-") as tmp:
            local = Path(tmp) / "Mail"
            local.mkdir()
            if prepare is not None:
                prepare(local)
            text = _config(
                local,
                port=c.server.imap if port is None else port(c),
                host=host,
                user=user,
                password=password,
                far=far,
                create=create,
                sync=sync,
                ssl=ssl,
            )
            conf = Path(tmp) / "mbsyncrc"
            conf.write_text(edit(text) if edit else text)
            cli(["mbsync", "-q", "-c", str(Path(tmp) / config_name), channel], timeout=deadline)

    return run


def _while_single_session(run: Callable[[Ctx], None]) -> Callable[[Ctx], None]:
    def held(c: Ctx) -> None:
        other = imaplib.IMAP4(LOOPBACK, c.server.imap, timeout=5)
        try:
            other.login("single", "single-pw")
            run(c)
        finally:
            with contextlib.suppress(imaplib.IMAP4.error, OSError):
                other.logout()

    return held


FAM.add(
    "wrong_password",
    AUTH,
    "LOGIN rejected: AUTHENTICATIONFAILED",
    _mbsync(password="nope"),
)
FAM.add(
    "disabled_account",
    AUTH,
    "the account is disabled (nologin, reason Suspended)",
    _mbsync(user="disabled", password="disabled-pw"),
)
FAM.add(
    "wrong_network",
    AUTH,
    "the account may log in only from another network (allow_nets)",
    _mbsync(user="remote", password="remote-pw"),
)
FAM.add(
    "session_limit",
    RL | QUOTA,
    "one IMAP session per user and IP, and another session holds it",
    _while_single_session(_mbsync(user="single", password="single-pw")),
)
FAM.add(
    "far_box_missing",
    NF,
    "the far mailbox Archive/2019 does not exist and Create forbids making it",
    _mbsync(far="Archive/2019", create="None"),
)
FAM.add(
    "far_name_invalid",
    INT,
    "the pack's far mailbox name starts with ~: Dovecot refuses to create it",
    _mbsync(far="~private", create="Far"),
)
FAM.add(
    "config_missing",
    INT | NF,
    "-c names a config file that does not exist (the pack's own path)",
    _mbsync(config_name="nowhere.rc"),
)
FAM.add(
    "config_syntax",
    INT,
    "the pack's config has a keyword mbsync does not know",
    _mbsync(edit=lambda t: t.replace("Timeout 1\n", "Timeout 1\nFrobnicate yes\n")),
)
FAM.add(
    "unknown_channel",
    INT,
    "the pack asks for a channel its config does not define",
    _mbsync(channel="archive"),
)
FAM.add(
    "tls_to_plain",
    NET | INT,
    "the pack's misconfiguration: IMAPS (TLS at connect) to the plain IMAP port",
    _mbsync(ssl="IMAPS"),
)
FAM.add("refused", NET, "nothing listens", _mbsync(port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _mbsync(host=UNRESOLVABLE, port=lambda c: 143))
FAM.add(
    "silent",
    TO,
    "the server accepts and never greets: mbsync's Timeout 1",
    _mbsync(port=lambda c: c.net.silent),
)
FAM.add("dropped", NET, "closed at once", _mbsync(port=lambda c: c.net.close_now))
FAM.add(
    "garbage",
    NET | INT,
    "the peer greets with bytes of no protocol",
    _mbsync(port=lambda c: c.net.garbage),
)
