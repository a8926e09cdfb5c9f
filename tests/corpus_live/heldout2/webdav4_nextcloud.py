"""webdav4 against a fake Nextcloud WebDAV endpoint (sabre/dav) answering its documented
error documents (``<d:error><s:exception>Sabre\\DAV\\Exception\\NotFound</s:exception>
<s:message>...</s:message></d:error>``) and WebDAV's own statuses (405 on MKCOL of an
existing collection, 409 for a missing parent, 412, 423, 507)."""

from __future__ import annotations

import io
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    TO,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("webdav4", "fake Nextcloud WebDAV (sabre/dav errors)", http_setup, half="heldout2")

DAV = "/remote.php/dav/files/app"


def _client(url: str) -> Any:
    from webdav4.client import Client

    return Client(url + DAV, auth=("app", "app-pw"), timeout=1, retry=False)


def _ls(url: str) -> Any:
    return _client(url).ls("docs")


def _mkdir(url: str) -> Any:
    return _client(url).mkdir("docs/reports")


def _copy(url: str) -> Any:
    return _client(url).copy("docs/a.txt", "docs/b.txt")


def _remove(url: str) -> Any:
    return _client(url).remove("docs/a.txt")


def _upload(url: str) -> Any:
    return _client(url).upload_fileobj(io.BytesIO(b"x" * 2048), "docs/big.bin", overwrite=True)


def _sabre(exception: str, message: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns">\n'
        f"  <s:exception>{exception}</s:exception>\n"
        f"  <s:message>{message}</s:message>\n"
        "</d:error>\n"
    )


XML = {"Content-Type": "application/xml; charset=utf-8"}

READ: list[Row] = [
    (
        "not_authenticated",
        401,
        _sabre(
            "Sabre\\DAV\\Exception\\NotAuthenticated",
            "No public access to this resource., Username or password was incorrect, "
            "No 'Authorization: Bearer' header found. Either the client didn't send one, or "
            "the server is mis-configured",
        ),
        {**XML, "WWW-Authenticate": 'Basic realm="Nextcloud", charset="UTF-8"'},
        AUTH,
        None,
        "wrong app password",
    ),
    (
        "forbidden",
        403,
        _sabre("Sabre\\DAV\\Exception\\Forbidden", "Access to this resource has been denied"),
        XML,
        AUTH,
        None,
        "the share does not grant read",
    ),
    (
        "not_found",
        404,
        _sabre("Sabre\\DAV\\Exception\\NotFound", "File with name docs could not be located"),
        XML,
        NF,
        None,
        "the folder does not exist",
    ),
    (
        "throttled",
        429,
        _sabre(
            "OC\\Security\\RateLimiting\\Exception\\RateLimitExceededException",
            "Rate limit exceeded",
        ),
        XML,
        RL,
        None,
        "Nextcloud's rate limiting",
    ),
    (
        "maintenance",
        503,
        _sabre("Sabre\\DAV\\Exception\\ServiceUnavailable", "System is in maintenance mode."),
        {**XML, "Retry-After": "120", "X-Nextcloud-Maintenance-Mode": "1"},
        RL,
        120.0,
        "maintenance mode: 503 with Retry-After 120",
    ),
    (
        "server_error",
        500,
        _sabre("Doctrine\\DBAL\\Exception\\DriverException", "Internal Server Error"),
        XML,
        NET,
        None,
        "the server failed (5xx)",
    ),
    (
        "bad_gateway",
        502,
        "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
        "</h1></center><hr><center>nginx</center></body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the reverse proxy lost the backend (webdav4's BadGatewayError says the server 'may have "
        "refused to accept the resource', no status, no cause)",
    ),
]
http_cases(FAM, _ls, READ, content_type="application/xml; charset=utf-8")

WRITE: list[tuple[str, Any, Row]] = [
    (
        "mkdir",
        _mkdir,
        (
            "mkcol_exists",
            405,
            _sabre(
                "Sabre\\DAV\\Exception\\MethodNotAllowed",
                "The resource you tried to create already exists",
            ),
            XML,
            EXISTS,
            None,
            "MKCOL on an existing collection answers 405",
        ),
    ),
    (
        "mkdir",
        _mkdir,
        (
            "mkcol_no_parent",
            409,
            _sabre("Sabre\\DAV\\Exception\\Conflict", "Parent node does not exist"),
            XML,
            NF | INT,
            None,
            "MKCOL under a missing parent answers 409: a missing path, not an existing one",
        ),
    ),
    (
        "copy",
        _copy,
        (
            "copy_exists",
            412,
            _sabre(
                "Sabre\\DAV\\Exception\\PreconditionFailed",
                "The destination node already exists, and the overwrite header is set to false",
            ),
            XML,
            EXISTS,
            None,
            "COPY with Overwrite: F onto an existing file answers 412",
        ),
    ),
    (
        "remove",
        _remove,
        (
            "locked",
            423,
            _sabre("OCA\\DAV\\Connector\\Sabre\\Exception\\FileLocked", '"a.txt" is locked'),
            XML,
            TO | NET | RL | INT,
            None,
            "another client holds a lock on the file: it may free later, never a permanent code",
        ),
    ),
    (
        "upload",
        _upload,
        (
            "quota",
            507,
            _sabre(
                "Sabre\\DAV\\Exception\\InsufficientStorage",
                "Insufficient space in /files/app, 2048 required, 0 available",
            ),
            XML,
            QUOTA,
            None,
            "the user's storage quota is used up",
        ),
    ),
    (
        "upload",
        _upload,
        (
            "too_large",
            413,
            "<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>"
            "413 Request Entity Too Large</h1></center><hr><center>nginx</center></body></html>",
            {"Content-Type": "text/html"},
            INT,
            None,
            "over the proxy's body limit: never passes",
        ),
    ),
]
for _op, call, row in WRITE:
    http_cases(FAM, call, [row], transport=False)
