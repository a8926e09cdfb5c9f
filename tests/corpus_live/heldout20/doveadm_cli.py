"""Dovecot's ``doveadm`` CLI (Debian's dovecot-core) run as a pack runs it, a command on argv
with ``-c`` naming the configuration of a real Dovecot 2.3 (``heldout3._daemons.dovecot``:
users app and other in a passwd-file, maildirs, a 2 KiB quota for every user) started by the
setup: password checks through the server's auth socket, mailboxes that are missing or
already there, a quota that is full, names the server refuses; and, with ``-S HOST:PORT``,
a doveadm server that is not there, does not resolve, never answers, hangs up or answers
bytes of no protocol. Nothing is faked. The failure is the exit status (sysexits) and the
``Error: ...`` line the tool writes."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    TO,
    UNRESOLVABLE,
    Net,
    family,
    net,
    require,
)
from corpus_live.heldout3._daemons import dovecot


@dataclass
class Dove:
    conf: Path
    net: Net


def _run(conf: Path, *args: str, input: bytes | None = None, timeout: float = 30) -> None:
    subprocess.run(
        ["doveadm", "-c", str(conf), *args],
        capture_output=True,
        check=True,
        timeout=timeout,
        input=input,
    )


def _setup(stack: contextlib.ExitStack, work: Path) -> Dove:
    require("doveadm")
    dovecot(stack, work)
    conf = work / "dovecot" / "dovecot.conf"
    _run(conf, "mailbox", "create", "-u", "app", "Projects")
    _run(conf, "mailbox", "create", "-u", "app", "Archive")
    return Dove(conf, net(stack))


FAM = family(
    "doveadm",
    "the doveadm CLI against Dovecot 2.3 (Debian), real",
    _setup,
    half="heldout20",
)

_BIG = b"From: a@example.org\r\nTo: app@example.org\r\nSubject: big\r\n\r\n" + b"x" * 8000 + b"\r\n"


def _adm(*args: str, input: bytes | None = None) -> Callable[[Dove], None]:
    def run(c: Dove) -> None:
        _run(c.conf, *args, input=input)

    return run


def _remote(target: Callable[[Dove], str]) -> Callable[[Dove], None]:
    def run(c: Dove) -> None:
        # the pack's deadline: 5 s for a command that answers in milliseconds
        _run(c.conf, "mailbox", "list", "-u", "app", "-S", target(c), timeout=5)

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "auth test with a wrong password: passdb says auth failed",
    _adm("auth", "test", "app", "not-the-password"),
)
FAM.add(
    "unknown_user_auth",
    AUTH,
    "auth test of a user the passdb does not know",
    _adm("auth", "test", "ghost", "whatever"),
)
FAM.add(
    "create_existing",
    EXISTS,
    "mailbox create of a mailbox that already exists",
    _adm("mailbox", "create", "-u", "app", "Projects"),
)
FAM.add(
    "rename_onto_existing",
    EXISTS,
    "mailbox rename onto a name that already exists",
    _adm("mailbox", "rename", "-u", "app", "Projects", "Archive"),
)
FAM.add(
    "delete_missing",
    NF,
    "mailbox delete of a mailbox that does not exist",
    _adm("mailbox", "delete", "-u", "app", "Nowhere"),
)
FAM.add(
    "rename_missing",
    NF,
    "mailbox rename of a mailbox that does not exist",
    _adm("mailbox", "rename", "-u", "app", "Nowhere", "Somewhere"),
)
FAM.add(
    "status_missing_mailbox",
    NF,
    "mailbox status of a mailbox that does not exist",
    _adm("mailbox", "status", "-u", "app", "messages", "Nowhere"),
)
FAM.add(
    "save_over_quota",
    QUOTA,
    "save an 8 KB message for a user with a 2 KiB quota: Quota exceeded",
    _adm("save", "-u", "other", "-m", "INBOX", input=_BIG),
)
FAM.add(
    "bad_search_query",
    INT,
    "the pack passes a search query doveadm cannot parse",
    _adm("search", "-u", "app", "mailbox", "INBOX", "frobnicated", "since"),
)
FAM.add("unknown_command", INT, "the pack runs a command doveadm does not have", _adm("frobnicate"))
FAM.add(
    "remote_refused",
    NET,
    "-S to a doveadm server port nothing listens on",
    _remote(lambda c: f"{LOOPBACK}:{c.net.closed}"),
)
FAM.add(
    "remote_dns",
    NET,
    "-S to a doveadm server host that does not resolve (.invalid)",
    _remote(lambda c: f"{UNRESOLVABLE}:2425"),
)
FAM.add(
    "remote_silent",
    TO,
    "-S to a doveadm server that accepts and never answers: the pack's 5 s deadline",
    _remote(lambda c: f"{LOOPBACK}:{c.net.silent}"),
)
FAM.add(
    "remote_dropped",
    NET,
    "-S to a doveadm server that closes the connection at once",
    _remote(lambda c: f"{LOOPBACK}:{c.net.close_now}"),
)
FAM.add(
    "remote_garbage",
    NET,
    "-S to a peer answering bytes of no doveadm protocol",
    _remote(lambda c: f"{LOOPBACK}:{c.net.garbage}"),
)
