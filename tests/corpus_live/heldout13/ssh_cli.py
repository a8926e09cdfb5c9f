"""OpenSSH's ``ssh`` client CLI (Debian's ``openssh-client``) running a remote command, as a
pack runs it (``-F /dev/null``, ``BatchMode``, one identity, a pinned ``known_hosts`` with
strict checking, ``ConnectTimeout=1``, a subprocess deadline), against a real OpenSSH ``sshd``
(Debian's ``openssh-server``: public keys only, one user with a shell, one forced to SFTP).
Nothing is faked but the transport failures. The failure is ssh's exit status (255 for its
own errors, else the remote command's status) with ssh's or the remote command's stderr."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Served,
    cli,
    family,
    require,
    served,
)
from corpus_live.heldout3._daemons import Sshd, sshd

Ctx = Served[Sshd]


def _start(stack: contextlib.ExitStack, work: Path) -> Sshd:
    require("ssh")
    return sshd(stack, work)


FAM = family(
    "ssh",
    "the ssh CLI against OpenSSH sshd (Debian), real",
    served(_start),
    half="heldout13",
)


def _ssh(
    *command: str,
    user: str = "root",
    key: Callable[[Ctx], Path] = lambda c: c.server.key,
    known: Callable[[Ctx], Path] = lambda c: c.server.known_hosts,
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    options: tuple[str, ...] = (),
    deadline: float = 10.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        cli(
            [
                "ssh",
                "-F",
                "/dev/null",
                "-o",
                "BatchMode=yes",
                "-o",
                "IdentitiesOnly=yes",
                "-o",
                f"UserKnownHostsFile={known(c)}",
                "-o",
                "StrictHostKeyChecking=yes",
                "-o",
                "ConnectTimeout=1",
                *options,
                "-i",
                str(key(c)),
                "-p",
                str(p),
                f"{user}@{host}",
                *command,
            ],
            timeout=deadline,
        )

    return run


FAM.add(
    "key_not_authorized",
    AUTH,
    "Permission denied (publickey): the server does not know the pack's key",
    _ssh("true", key=lambda c: c.server.other_key),
)
FAM.add(
    "unknown_user",
    AUTH,
    "Permission denied (publickey): no such account on the server",
    _ssh("true", user="ghost"),
)
FAM.add(
    "missing_identity",
    AUTH,
    "the identity file is not there: no key to offer, Permission denied (publickey)",
    _ssh("true", key=lambda c: c.server.key.parent / "no_such_key"),
)


def _empty_known(c: Ctx) -> Path:
    path = c.server.key.parent / "empty_known_hosts"
    path.write_text("")
    return path


FAM.add(
    "host_key_unknown",
    AUTH,
    "Host key verification failed: no host key is known for the server (strict checking)",
    _ssh("true", known=_empty_known),
)
FAM.add(
    "host_key_changed",
    AUTH,
    "REMOTE HOST IDENTIFICATION HAS CHANGED: Host key verification failed",
    _ssh("true", known=lambda c: c.server.wrong_known_hosts),
)
FAM.add(
    "sftp_only_account",
    AUTH | INT,
    "the account is forced to internal-sftp: the command never runs, exit 1, stderr empty",
    _ssh("cat", "/etc/hostname", user="nobody"),
)
FAM.add(
    "remote_file_missing",
    NF,
    "the remote command fails: cat: No such file or directory (exit 1)",
    _ssh("cat", "/srv/reports/2024-01.csv"),
)
FAM.add(
    "remote_command_missing",
    NF | INT,
    "the remote shell has no such program: command not found (exit 127)",
    _ssh("report-tool", "--daily"),
)
FAM.add(
    "remote_dir_exists",
    EXISTS,
    "the remote command fails: mkdir: cannot create directory: File exists (exit 1)",
    _ssh("mkdir", "/tmp"),
)
FAM.add(
    "remote_command_slow",
    TO,
    "the remote command outlives the pack's 2 s deadline",
    _ssh("sleep", "5", deadline=2),
)
FAM.add(
    "bad_option",
    INT,
    "ssh's own check: Bad configuration option (the pack's argv)",
    _ssh("true", options=("-o", "RetryForever=yes")),
)
FAM.add(
    "refused",
    NET,
    "connect to host: Connection refused",
    _ssh("true", port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "Could not resolve hostname: Name or service not known",
    _ssh("true", host=UNRESOLVABLE, port=lambda c: 22),
)
FAM.add(
    "silent",
    TO,
    "no banner within ConnectTimeout=1: Connection timed out during banner exchange",
    _ssh("true", port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "kex_exchange_identification: Connection closed by remote host",
    _ssh("true", port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET,
    "the peer's banner is no SSH protocol",
    _ssh("true", port=lambda c: c.net.garbage),
)
