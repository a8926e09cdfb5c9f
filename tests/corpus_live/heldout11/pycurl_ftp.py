"""pycurl (PycURL, the Python interface to libcurl, its wheel's own libcurl) used as a pack uses
it for FTP (a ``Curl`` handle per transfer: credentials in the URL's user option, downloads to
memory, uploads from memory, raw commands with ``QUOTE``, a 1.5 s transfer timeout) against a
real FTP server (pyftpdlib's threaded server: a read-write user, a read-only user, an anonymous
read-only area). The failure is ``pycurl.error`` carrying libcurl's error number and message,
with the server's reply in it. Nothing is faked."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path

import pycurl  # type: ignore[import-untyped]

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
    family,
    served,
)
from corpus_live.servers import Ftp, ftp

Ctx = Served[Ftp]


def _start(stack: contextlib.ExitStack, work: Path) -> Ftp:
    return ftp(stack, work)


FAM = family(
    "pycurl",
    "pycurl (libcurl) against an FTP server (pyftpdlib), real",
    served(_start),
    half="heldout11",
)


def _curl(
    path: str,
    *,
    user: str | None = "app:app-pw",
    upload: bytes | None = None,
    quote: list[str] | None = None,
    nobody: bool = False,
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    scheme: str = "ftp",
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        sink = io.BytesIO()
        curl = pycurl.Curl()
        try:
            curl.setopt(pycurl.URL, f"{scheme}://{host}:{p}{path}")
            if user:
                curl.setopt(pycurl.USERPWD, user)
            curl.setopt(pycurl.WRITEDATA, sink)
            curl.setopt(pycurl.CONNECTTIMEOUT_MS, 1000)
            curl.setopt(pycurl.TIMEOUT_MS, 1500)
            curl.setopt(pycurl.NOSIGNAL, 1)
            if upload is not None:
                curl.setopt(pycurl.UPLOAD, 1)
                curl.setopt(pycurl.READDATA, io.BytesIO(upload))
                curl.setopt(pycurl.INFILESIZE, len(upload))
            if quote:
                curl.setopt(pycurl.QUOTE, quote)
            if nobody:
                curl.setopt(pycurl.NOBODY, 1)
            curl.perform()
        finally:
            curl.close()

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "530 Authentication failed: libcurl's 'Access denied: 530'",
    _curl("/pub/hello.txt", user="app:not-it"),
)
FAM.add(
    "unknown_user",
    AUTH,
    "530 for a user the server does not know",
    _curl("/pub/hello.txt", user="mallory:app-pw"),
)
FAM.add(
    "missing_file",
    NF,
    "RETR of a file that does not exist: 550",
    _curl("/pub/nothing-here.txt"),
)
FAM.add(
    "missing_directory",
    NF,
    "CWD into a directory that does not exist: 550",
    _curl("/archive/2020/report.txt"),
)
FAM.add(
    "reader_upload",
    AUTH,
    "STOR by a read-only user: 550 Not enough privileges",
    _curl("/pub/new.txt", user="reader:reader-pw", upload=b"data\n"),
)
FAM.add(
    "anonymous_upload",
    AUTH,
    "STOR by the anonymous user, whose area is read-only",
    _curl("/new.txt", user=None, upload=b"data\n"),
)
FAM.add(
    "delete_missing",
    NF,
    "QUOTE DELE of a file that does not exist: 550",
    _curl("/pub/", quote=["DELE /pub/ghost.txt"], nobody=True),
)
FAM.add(
    "mkdir_exists",
    EXISTS,
    "QUOTE MKD of a directory that already exists: 550 File exists",
    _curl("/", quote=["MKD /pub"], nobody=True),
)
FAM.add(
    "unknown_command",
    INT,
    "the pack's QUOTE sends a command the server does not know: 500",
    _curl("/", quote=["FROB /pub"], nobody=True),
)
FAM.add(
    "unsupported_scheme",
    INT,
    "the pack's URL names a protocol libcurl does not have",
    _curl("/pub/hello.txt", scheme="ftpx"),
)
FAM.add("refused", NET, "nothing listens", _curl("/pub/hello.txt", port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _curl("/pub/hello.txt", host=UNRESOLVABLE, port=lambda c: 21),
)
FAM.add(
    "silent",
    TO,
    "the server never sends its greeting: libcurl's timeout fires",
    _curl("/pub/hello.txt", port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "the server end closes the connection at once",
    _curl("/pub/hello.txt", port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not FTP",
    _curl("/pub/hello.txt", port=lambda c: c.net.garbage),
)
