"""The ``rsync`` CLI (Debian's ``rsync`` 3.2) over ssh, run as a pack runs it (``-e ssh`` with
``BatchMode``, one identity, strict host key checking against a known_hosts file,
``ConnectTimeout=1``, a subprocess deadline) against a real OpenSSH ``sshd`` (Debian's
``openssh-server``, ``heldout3._daemons.sshd``: public keys only, ``root`` with a shell,
``nobody`` forced to ``internal-sftp``). The failure is rsync's exit status (11 file I/O, 12
protocol data stream, 23 partial transfer, 25 --max-delete, 255 ssh...) and its
``rsync: ...`` / ``rsync error: ...`` lines on stderr. Nothing is faked."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable
from pathlib import Path

from corpus_live.core import (
    AUTH,
    DEP,
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
    require("rsync", "ssh")
    return sshd(stack, work)


FAM = family(
    "rsync",
    "the rsync CLI over ssh against OpenSSH's sshd (Debian), real",
    served(_start),
    half="heldout21",
)

#: (ctx, local scratch dir) -> rsync's operands; "R:" marks the remote side
Args = Callable[[Ctx, Path], list[str]]


def _rsync(
    args: Args,
    *,
    user: str = "root",
    key: Callable[[Sshd], Path] | None = None,
    known: Callable[[Ctx, Path], Path] | None = None,
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    deadline: float = 15.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        srv = c.server
        with tempfile.TemporaryDirectory(prefix="corpus44-rsync-") as tmp:
            local = Path(tmp)
            (local / "upload.txt").write_text("payload\n")
            ssh = (
                f"ssh -p {srv.port if port is None else port(c)} "
                f"-i {key(srv) if key else srv.key} -o BatchMode=yes -o IdentitiesOnly=yes "
                "-o ConnectTimeout=1 -o StrictHostKeyChecking=yes "
                f"-o UserKnownHostsFile={known(c, local) if known else srv.known_hosts} "
                "-o GlobalKnownHostsFile=/dev/null"
            )
            operands = [a.replace("R:", f"{user}@{host}:") for a in args(c, local)]
            cli(["rsync", "-e", ssh, *operands], timeout=deadline)

    return run


def _down(name: str) -> Args:
    return lambda c, tmp: [f"R:{c.server.home / name}", str(tmp / "got")]


def _up(remote: str) -> Args:
    return lambda c, tmp: [str(tmp / "upload.txt"), f"R:{remote}"]


FAM.add(
    "key_not_authorized",
    AUTH,
    "ssh: Permission denied (publickey): the pack's key is not authorized (exit 255)",
    _rsync(_down("hello.txt"), key=lambda s: s.other_key),
)
FAM.add(
    "unknown_user",
    AUTH,
    "ssh: Permission denied (publickey) for a user the server does not know",
    _rsync(_down("hello.txt"), user="deploy"),
)
FAM.add(
    "host_key_mismatch",
    AUTH | INT,
    "the server's host key differs from known_hosts: Host key verification failed",
    _rsync(_down("hello.txt"), known=lambda c, tmp: c.server.wrong_known_hosts),
)
FAM.add(
    "download_missing",
    NF,
    'rsync: [sender] link_stat ".../nope.txt" failed: No such file or directory (exit 23)',
    _rsync(_down("nope.txt")),
)
FAM.add(
    "upload_dir_missing",
    NF,
    'rsync: [Receiver] mkdir "/nonexistent/dir" failed: No such file or directory (exit 11)',
    _rsync(_up("/nonexistent/dir/")),
)
FAM.add(
    "upload_denied",
    AUTH | INT,
    'rsync: [receiver] mkstemp "/sys/..." failed: Permission denied (13): the remote target '
    "directory is not writable",
    _rsync(_up("/sys/upload.txt")),
)
FAM.add(
    "local_source_missing",
    NF | INT,
    "the pack's local source file does not exist: link_stat failed (exit 23)",
    _rsync(lambda c, tmp: [str(tmp / "none.txt"), f"R:{c.server.home}/"]),
)
FAM.add(
    "sftp_only_account",
    INT,
    "the account is forced to internal-sftp: protocol version mismatch -- is your shell "
    "clean? (exit 2)",
    _rsync(_down("hello.txt"), user="nobody"),
)
FAM.add(
    "remote_rsync_missing",
    DEP,
    "the remote rsync named by --rsync-path is not installed: No such file or directory, "
    "connection unexpectedly closed (exit 12)",
    _rsync(
        lambda c, tmp: [
            "--rsync-path=/opt/missing/bin/rsync",
            f"R:{c.server.home / 'hello.txt'}",
            str(tmp / "got"),
        ]
    ),
)
FAM.add(
    "max_delete",
    INT,
    "Deletions stopped due to --max-delete limit (exit 25): the pack's own safety limit",
    _rsync(
        lambda c, tmp: [
            "-r",
            "--delete",
            "--max-delete=0",
            f"{tmp}/",
            f"R:{c.server.home}/",
        ]
    ),
)
FAM.add(
    "refused",
    NET,
    "ssh: connect to host 127.0.0.1: Connection refused",
    _rsync(_down("hello.txt"), port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "ssh: Could not resolve hostname: Name or service not known",
    _rsync(_down("hello.txt"), host=UNRESOLVABLE),
)
FAM.add(
    "silent",
    TO,
    "the peer accepts and never sends its SSH banner: ssh's ConnectTimeout fires",
    _rsync(_down("hello.txt"), port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "the peer closes at once: Connection closed by remote host",
    _rsync(_down("hello.txt"), port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol: kex_exchange_identification: banner line "
    "contains invalid characters",
    _rsync(_down("hello.txt"), port=lambda c: c.net.garbage),
)
