"""GNU Wget (Debian's ``wget``) fetching ``ftp://`` URLs as a pack runs it (``--tries=1``,
``--timeout=1``, the password in the URL, output to a file of the case), against a real
ProFTPD (Debian's ``proftpd-core``): users ``app`` (jailed in its home) and nobody else, a
file no one may read. The failure is Wget's exit status (its documented codes: 1 generic,
2 parse, 3 file I/O, 4 network, 6 authentication, 8 server error response) and its messages
on stderr. Nothing is faked."""

from __future__ import annotations

import contextlib
import os
import subprocess
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
    family,
    require,
    served,
)
from corpus_live.heldout3._daemons import Proftpd, proftpd

Ctx = Served[Proftpd]


def _start(stack: contextlib.ExitStack, work: Path) -> Proftpd:
    require("wget")
    ftp = proftpd(stack, work)
    secret = ftp.home / "docs" / "secret.txt"
    secret.write_text("no\n")
    os.chown(secret, 0, 0)
    os.chmod(secret, 0o600)
    return ftp


FAM = family(
    "wget",
    "the wget CLI (FTP) against ProFTPD (Debian), real",
    served(_start),
    half="heldout9",
)


def _wget(
    path: str,
    *extra: str,
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    scheme: str = "ftp",
    out: str | None = None,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        target = out or str(c.server.home.parent / "wget.out")
        subprocess.run(
            [
                "wget",
                "--no-config",
                "--tries=1",
                "--timeout=1",
                "-O",
                target,
                *extra,
                f"{scheme}://{user}:{password}@{host}:{p}/{path}",
            ],
            capture_output=True,
            check=True,
            timeout=20,
        )

    return run


FAM.add("wrong_password", AUTH, "530 Login incorrect", _wget("docs/readme.txt", password="nope"))
FAM.add(
    "unknown_user",
    AUTH,
    "530 Login incorrect for a user the server does not have",
    _wget("docs/readme.txt", user="ghost", password="x"),
)
FAM.add("missing_file", NF, "RETR of a file that does not exist", _wget("docs/ghost.txt"))
FAM.add(
    "missing_directory",
    NF,
    "CWD into a directory that does not exist",
    _wget("archive/2020/report.txt"),
)
FAM.add(
    "permission_denied",
    AUTH | NF,
    "RETR of a root-owned file mode 0600: 550 Permission denied, told as no such file",
    _wget("docs/secret.txt"),
)
FAM.add(
    "local_write_fails",
    INT,
    "the -O path's directory does not exist: Wget cannot open its output",
    _wget("docs/readme.txt", out="/nonexistent-dir/corpus/out.txt"),
)
FAM.add(
    "unsupported_scheme",
    INT,
    "a URL scheme Wget does not know",
    _wget("docs/readme.txt", scheme="ftpx"),
)
FAM.add(
    "bad_option",
    INT,
    "an option Wget does not know (exit 2)",
    _wget("docs/readme.txt", "--frobnicate"),
)
FAM.add("refused", NET, "nothing listens", _wget("docs/readme.txt", port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _wget("docs/readme.txt", host=UNRESOLVABLE, port=lambda c: 21),
)
FAM.add(
    "silent",
    TO | NET,
    "the server never sends its greeting: --timeout=1 expires, told as a bad response",
    _wget("docs/readme.txt", port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "closed at once",
    _wget("docs/readme.txt", port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET | INT,
    "the peer answers bytes of no protocol",
    _wget("docs/readme.txt", port=lambda c: c.net.garbage),
)
