"""OpenSSH's ``scp`` CLI (Debian's ``openssh-client``, 9.2: the SFTP protocol by default, the
legacy SCP protocol with ``-O``) run as a pack runs it (no ``-q``, ``BatchMode``, one identity, strict host
key checking against a known_hosts file, ``ConnectTimeout=1``, a subprocess deadline) against
a real OpenSSH ``sshd`` (Debian's ``openssh-server``: public keys only, ``root`` with a shell,
``nobody`` forced to ``internal-sftp``, a file only root may read). The failure is the exit
status and ``scp: ...`` / ``ssh: ...`` on stderr. Nothing is faked."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable
from pathlib import Path

from corpus_live.core import (
    AUTH,
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
    require("scp", "ssh")
    srv = sshd(stack, work)
    (srv.home / "reports").mkdir(exist_ok=True)
    (srv.home / "reports" / "q1.csv").write_text("a,b\n1,2\n")
    return srv


FAM = family(
    "scp",
    "the scp CLI against OpenSSH's sshd (Debian), real",
    served(_start),
    half="heldout10",
)

#: (ctx, local scratch dir) -> (source, target) as scp takes them; "R:" marks the remote side
Paths = Callable[[Ctx, Path], tuple[str, str]]


def _scp(
    paths: Paths,
    *,
    user: str = "nobody",
    legacy: bool = False,
    key: Callable[[Sshd], Path] | None = None,
    known: Callable[[Ctx, Path], Path] | None = None,
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    strict: str = "yes",
    deadline: float = 15.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        srv = c.server
        with tempfile.TemporaryDirectory(prefix="corpus44-scp-") as tmp:
            local = Path(tmp)
            (local / "upload.txt").write_text("payload\n")
            src, dst = (p.replace("R:", f"{user}@{host}:") for p in paths(c, local))
            cli(
                [
                    "scp",
                    *(["-O"] if legacy else []),
                    "-i",
                    str(key(srv) if key else srv.key),
                    "-P",
                    str(srv.port if port is None else port(c)),
                    "-o",
                    "BatchMode=yes",
                    "-o",
                    "IdentitiesOnly=yes",
                    "-o",
                    "ConnectTimeout=1",
                    "-o",
                    f"StrictHostKeyChecking={strict}",
                    "-o",
                    f"UserKnownHostsFile={known(c, local) if known else srv.known_hosts}",
                    "-o",
                    "GlobalKnownHostsFile=/dev/null",
                    src,
                    dst,
                ],
                timeout=deadline,
            )

    return run


def _down(name: str) -> Paths:
    return lambda c, tmp: (f"R:{c.server.home / name}", str(tmp / "got"))


def _up(remote: str) -> Paths:
    return lambda c, tmp: (str(tmp / "upload.txt"), f"R:{c.server.home / remote}")


def _empty_known(c: Ctx, tmp: Path) -> Path:
    path = tmp / "known_hosts"
    path.write_text("")
    return path


FAM.add(
    "key_not_authorized",
    AUTH,
    "Permission denied (publickey): the client's key is not authorized",
    _scp(_down("hello.txt"), key=lambda s: s.other_key),
)
FAM.add(
    "unknown_user",
    AUTH,
    "Permission denied (publickey) for a user that does not exist",
    _scp(_down("hello.txt"), user="deploy"),
)
FAM.add(
    "host_key_mismatch",
    AUTH | INT,
    "the server's host key differs from known_hosts: Host key verification failed",
    _scp(_down("hello.txt"), known=lambda c, tmp: c.server.wrong_known_hosts),
)
FAM.add(
    "host_key_unknown",
    AUTH | INT,
    "no host key known and StrictHostKeyChecking=yes: Host key verification failed",
    _scp(_down("hello.txt"), known=_empty_known),
)
FAM.add("download_missing", NF, "the remote file does not exist", _scp(_down("q9.csv")))
FAM.add(
    "download_denied",
    AUTH,
    "the remote file is mode 0600, owned by root: permission denied",
    _scp(_down("secret.txt")),
)
FAM.add(
    "upload_denied",
    AUTH,
    "nobody uploads into a directory only root may write",
    _scp(_up("upload.txt")),
)
FAM.add(
    "upload_dir_missing",
    NF,
    "the upload's remote directory does not exist",
    _scp(_up("no-such-dir/upload.txt"), user="root"),
)
FAM.add(
    "legacy_missing",
    NF,
    "the legacy SCP protocol (-O): the remote scp finds no such file",
    _scp(_down("q9.csv"), user="root", legacy=True),
)
FAM.add(
    "legacy_directory",
    INT,
    "the legacy SCP protocol (-O): a directory copied without -r is not a regular file",
    _scp(_down("reports"), user="root", legacy=True),
)
FAM.add(
    "local_source_missing",
    NF | INT,
    "the pack's own local source file does not exist",
    _scp(lambda c, tmp: (str(tmp / "never-written.txt"), f"R:{c.server.home / 'x.txt'}")),
)
FAM.add(
    "refused",
    NET,
    "ssh: connect to host port: Connection refused",
    _scp(_down("hello.txt"), port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "ssh: Could not resolve hostname (.invalid)",
    _scp(_down("hello.txt"), host=UNRESOLVABLE),
)
FAM.add(
    "silent",
    TO,
    "the server never sends its banner: ConnectTimeout 1 during the banner exchange",
    _scp(_down("hello.txt"), port=lambda c: c.net.silent, strict="no"),
)
FAM.add(
    "dropped",
    NET,
    "kex_exchange_identification: the server closes the connection at once",
    _scp(_down("hello.txt"), port=lambda c: c.net.close_now, strict="no"),
)
