"""OpenSSH's ``sftp`` CLI (Debian's openssh-client) in batch mode (``-b``), run as a pack runs
it, against a real OpenSSH sshd (Debian's openssh-server, public keys only; the user
``nobody`` gets ``internal-sftp`` only). The failure is the exit status and the CLI's stderr:
ssh's own messages for the session (``Permission denied (publickey)``, ``Host key
verification failed``), sftp's for the SFTP status codes of the batch command that failed."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

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


def _start(stack: Any, work: Any) -> Sshd:
    require("sftp", "ssh")
    srv = sshd(stack, work)
    (srv.home / "existing").mkdir(exist_ok=True)
    return srv


FAM = family(
    "sftp",
    "the sftp CLI (batch mode) against OpenSSH's sshd (Debian), real",
    served(_start),
    half="heldout6",
)


def _sftp(
    batch: Any,
    *,
    user: str = "nobody",
    key: Any = None,
    known: Any = None,
    host: str = LOOPBACK,
    port: Any = None,
    strict: str = "yes",
) -> Any:
    """``batch(ctx, tmp)``: the batch file's lines (``tmp`` a local scratch directory)."""

    def run(c: Ctx) -> None:
        srv = c.server
        with tempfile.TemporaryDirectory(prefix="corpus44-sftp-") as tmp:
            lines = batch(c, Path(tmp))
            script = Path(tmp) / "batch"
            script.write_text("\n".join(lines) + "\n")
            cli(
                [
                    "sftp",
                    "-b",
                    str(script),
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
                    f"UserKnownHostsFile={known(c, Path(tmp)) if known else srv.known_hosts}",
                    "-o",
                    "GlobalKnownHostsFile=/dev/null",
                    f"{user}@{host}",
                ],
                timeout=15,
            )

    return run


def _get(name: str) -> Any:
    return _sftp(lambda c, tmp: [f"get {c.server.home / name} {tmp / 'out'}"])


def _empty_known(c: Ctx, tmp: Path) -> Path:
    path = tmp / "known_hosts"
    path.write_text("")
    return path


FAM.add(
    "key_not_authorized",
    AUTH,
    "Permission denied (publickey): the client's key is not in authorized_keys",
    _sftp(lambda c, tmp: ["ls"], key=lambda s: s.other_key),
)
FAM.add(
    "unknown_user",
    AUTH,
    "Permission denied (publickey) for a user that does not exist",
    _sftp(lambda c, tmp: ["ls"], user="ghost"),
)
FAM.add(
    "host_key_mismatch",
    AUTH | INT,
    "REMOTE HOST IDENTIFICATION HAS CHANGED: Host key verification failed (possible impersonation)",
    _sftp(lambda c, tmp: ["ls"], known=lambda c, tmp: c.server.wrong_known_hosts),
)
FAM.add(
    "host_key_unknown",
    AUTH | INT,
    "No host key is known and StrictHostKeyChecking=yes: Host key verification failed",
    _sftp(lambda c, tmp: ["ls"], known=_empty_known),
)
FAM.add("get_missing", NF, "get: File not found (SSH_FX_NO_SUCH_FILE)", _get("nope.txt"))
FAM.add(
    "get_denied",
    AUTH,
    "get: Permission denied on a file mode 0600 owned by root (SSH_FX_PERMISSION_DENIED)",
    _get("secret.txt"),
)
FAM.add(
    "put_denied",
    AUTH,
    "put: Permission denied writing into a directory nobody cannot write",
    _sftp(
        lambda c, tmp: [
            f"!echo data > {tmp / 'up.txt'}",
            f"put {tmp / 'up.txt'} {c.server.home / 'up.txt'}",
        ]
    ),
)
FAM.add(
    "mkdir_exists",
    EXISTS | INT,
    "mkdir of a directory that exists: sftp reports the server's generic Failure",
    _sftp(lambda c, tmp: [f"mkdir {c.server.home / 'existing'}"], user="root"),
)
FAM.add(
    "rm_missing",
    NF,
    "rm: Couldn't delete file: No such file or directory",
    _sftp(lambda c, tmp: [f"rm {c.server.home / 'ghost.txt'}"], user="root"),
)
FAM.add(
    "cd_missing",
    NF,
    "cd: No such file or directory (a directory that does not exist)",
    _sftp(lambda c, tmp: [f"cd {c.server.home / 'no-such-dir'}"]),
)
FAM.add(
    "put_local_missing",
    INT | NF,
    "put: stat local file: No such file or directory (the pack's own local path)",
    _sftp(lambda c, tmp: [f"put {tmp / 'never-written.txt'} /tmp/x"]),
)
FAM.add(
    "bad_command",
    INT,
    "Invalid command in the batch file (the pack's own script)",
    _sftp(lambda c, tmp: ["frobnicate now"]),
)
FAM.add(
    "refused",
    NET,
    "ssh: connect to host port: Connection refused",
    _sftp(lambda c, tmp: ["ls"], port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "ssh: Could not resolve hostname (.invalid)",
    _sftp(lambda c, tmp: ["ls"], host=UNRESOLVABLE),
)
FAM.add(
    "silent",
    TO,
    "the server never sends its banner: Connection timed out during banner exchange (ConnectTimeout 1)",
    _sftp(lambda c, tmp: ["ls"], port=lambda c: c.net.silent, strict="no"),
)
FAM.add(
    "dropped",
    NET,
    "kex_exchange_identification: Connection closed by remote host",
    _sftp(lambda c, tmp: ["ls"], port=lambda c: c.net.close_now, strict="no"),
)
