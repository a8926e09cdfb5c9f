"""The ``aria2c`` download CLI (Debian's ``aria2``) run as a pack runs it (one try, no retry
wait, 1 s timeouts, no config file, output into the family's scratch directory, captured
output, ``check=True``) against a fake file server on 127.0.0.1 answering as nginx does: its
status lines, ``Server: nginx`` and its built-in HTML error pages byte for byte (nginx's
``ngx_http_special_response.c``), ``WWW-Authenticate`` for ``auth_basic`` and the 429 of
``limit_req_status 429``. aria2c's own checks (options, checksum, an existing output file)
are its real behaviour. The failure is aria2c's exit status (its documented error codes)
with its error lines on stdout."""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    RL,
    TO,
    UNRESOLVABLE,
    Http,
    family,
    http_setup,
    require,
)

FAM = family(
    "aria2c",
    "the aria2c CLI against a fake nginx file server",
    http_setup,
    half="heldout14",
)

_TITLES = {
    401: "401 Authorization Required",
    403: "403 Forbidden",
    404: "404 Not Found",
    410: "410 Gone",
    429: "429 Too Many Requests",
    500: "500 Internal Server Error",
    502: "502 Bad Gateway",
    503: "503 Service Temporarily Unavailable",
    504: "504 Gateway Time-out",
}


def _page(status: int) -> str:
    t = _TITLES[status]
    return (
        f"<html>\r\n<head><title>{t}</title></head>\r\n<body>\r\n"
        f"<center><h1>{t}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    )


_NGINX = {"Server": "nginx"}


def _get(
    *args: str,
    host: str = LOOPBACK,
    port: Callable[[Http], int] | None = None,
    status: int | None = None,
    body: str = "",
    headers: dict[str, str] | None = None,
    out: str = "file.bin",
    existing: bool = False,
) -> Callable[[Http], None]:
    def run(c: Http) -> None:
        require("aria2c")
        if status is not None:
            c.http.set(
                status,
                body or _page(status),
                {**_NGINX, **(headers or {})},
                content_type="text/html" if status >= 400 else "application/octet-stream",
            )
        p = c.http.port if port is None else port(c)
        with tempfile.TemporaryDirectory(prefix="corpus44-aria2c-") as tmp:
            _download(Path(tmp), p, host, out, existing, args)

    return run


def _download(
    where: Path, port: int, host: str, out: str, existing: bool, args: tuple[str, ...]
) -> None:
    if existing:
        (where / out).write_bytes(b"an earlier download\n")
    subprocess.run(
        [
            "aria2c",
            "--no-conf",
            "--max-tries=1",
            "--retry-wait=0",
            "--connect-timeout=1",
            "--timeout=1",
            "--summary-interval=0",
            "--console-log-level=error",
            "--allow-overwrite=false",
            "--auto-file-renaming=false",
            f"--dir={where}",
            f"--out={out}",
            *args,
            f"http://{host}:{port}/releases/tool-1.2.tar.gz",
        ],
        capture_output=True,
        check=True,
        timeout=20,
    )


FAM.add("not_found", NF, "HTTP 404: the file is not on the server", _get(status=404))
FAM.add("gone", NF, "HTTP 410: the file was removed for good", _get(status=410))
FAM.add(
    "no_credentials",
    AUTH,
    "HTTP 401 with a Basic challenge: no credentials given",
    _get(status=401, headers={"WWW-Authenticate": 'Basic realm="releases"'}),
)
FAM.add(
    "wrong_credentials",
    AUTH,
    "HTTP 401: the Basic credentials are refused",
    _get(
        "--http-user=ci",
        "--http-passwd=wrong",
        status=401,
        headers={"WWW-Authenticate": 'Basic realm="releases"'},
    ),
)
FAM.add("forbidden", AUTH, "HTTP 403: access to the file is denied", _get(status=403))
FAM.add("throttled", RL, "HTTP 429: nginx limit_req rejects the request", _get(status=429))
FAM.add("server_error", NET, "HTTP 500 from the file server", _get(status=500))
FAM.add("bad_gateway", NET, "HTTP 502: the file server's upstream is down", _get(status=502))
FAM.add(
    "gateway_timeout",
    TO | NET,
    "HTTP 504: the file server's upstream timed out",
    _get(status=504),
)
FAM.add(
    "file_exists",
    EXISTS | INT,
    "the output file already exists and overwriting is off",
    _get(status=200, body="payload\n", existing=True),
)
FAM.add(
    "checksum_mismatch",
    INT,
    "the downloaded file does not match the sha-256 the caller gave",
    _get(
        "--checksum=sha-256=" + hashlib.sha256(b"something else").hexdigest(),
        status=200,
        body="payload\n",
    ),
)
FAM.add(
    "bad_option",
    INT,
    "aria2c's own check: --max-tries is not a number",
    _get("--max-tries=lots", status=200, body="payload\n"),
)
FAM.add("refused", NET, "nothing listens", _get(port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _get(host=UNRESOLVABLE, port=lambda c: 80))
FAM.add(
    "silent",
    TO,
    "the server accepts and never answers: the 1 s timeout expires",
    _get(port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "the server closes the connection without a word",
    _get(port=lambda c: c.net.close_now),
)
