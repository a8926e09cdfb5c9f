"""azure-storage-blob against a fake Blob endpoint answering Azure Storage's error XML
and ``x-ms-error-code`` header."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, EXISTS, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family(
    "azure-storage-blob",
    "fake Azure Blob endpoint (x-ms-error-code, XML)",
    http_setup,
    half="heldout",
)


def _call(url: str) -> Any:
    from azure.storage.blob import BlobClient

    blob = BlobClient.from_blob_url(
        f"{url}/acct/photos/cat.jpg?sv=2024-01-01&sig=PLANTED",
        retry_total=0,
        connection_timeout=1,
        read_timeout=1,
    )
    return blob.download_blob().readall()


def _x(code: str, message: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?>'
        f"<Error><Code>{code}</Code><Message>{message}\nRequestId:1\nTime:2026-01-01T00:00:00Z</Message></Error>"
    )


def _row(
    id: str,
    status: int,
    code: str,
    message: str,
    expect: frozenset[str],
    why: str,
    ra: float | None = None,
    extra: dict[str, str] | None = None,
) -> Row:
    return (
        id,
        status,
        _x(code, message),
        {"x-ms-error-code": code, **(extra or {})},
        expect,
        ra,
        why,
    )


ROWS: list[Row] = [
    _row(
        "blob_missing",
        404,
        "BlobNotFound",
        "The specified blob does not exist.",
        NF,
        "no such blob",
    ),
    _row(
        "container_missing",
        404,
        "ContainerNotFound",
        "The specified container does not exist.",
        NF,
        "no such container",
    ),
    _row(
        "auth",
        403,
        "AuthenticationFailed",
        "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.",
        AUTH,
        "signature rejected",
    ),
    _row(
        "perm",
        403,
        "AuthorizationPermissionMismatch",
        "This request is not authorized to perform this operation using this permission.",
        AUTH,
        "SAS lacks permission",
    ),
    _row(
        "busy",
        503,
        "ServerBusy",
        "Operations per second is over the account limit.",
        RL,
        "account throttled",
        5.0,
        {"Retry-After": "5"},
    ),
    _row(
        "busy_bare",
        503,
        "ServerBusy",
        "Ingress is over the account limit.",
        RL | NET,
        "throttled, no delay",
    ),
    _row(
        "timeout",
        500,
        "OperationTimedOut",
        "The operation could not be completed within the permitted time.",
        TO,
        "operation timed out",
    ),
    _row(
        "internal",
        500,
        "InternalError",
        "The server encountered an internal error. Please retry the request.",
        NET,
        "internal error",
    ),
    _row(
        "exists",
        409,
        "BlobAlreadyExists",
        "The specified blob already exists.",
        EXISTS,
        "blob exists",
    ),
    _row(
        "lease",
        412,
        "LeaseIdMissing",
        "There is currently a lease on the blob and no lease ID was specified in the request.",
        INT,
        "a lease held by someone else",
    ),
    _row(
        "disabled",
        403,
        "AccountIsDisabled",
        "The specified account is disabled.",
        AUTH,
        "account disabled",
    ),
    _row(
        "bad_header",
        400,
        "InvalidHeaderValue",
        "The value for one of the HTTP headers is not in the correct format.",
        INT,
        "bad header: the pack's bug",
    ),
]
http_cases(FAM, _call, ROWS, content_type="application/xml")
