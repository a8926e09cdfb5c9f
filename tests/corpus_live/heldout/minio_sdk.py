"""The MinIO Python SDK against a fake S3 endpoint answering S3's XML error documents."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

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

FAM = family("minio", "fake S3 endpoint (XML <Error><Code>)", http_setup, half="heldout")


def _call(url: str) -> Any:
    import urllib3
    from minio import Minio

    u = urlsplit(url)
    http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=1, read=1))
    client = Minio(
        f"{u.hostname}:{u.port}",
        access_key="AKIAPLANTED",
        secret_key="s3cr3t",
        secure=False,
        region="us-east-1",
        http_client=http,
    )
    # A GET, whose error answer has a body: the first run used stat_object, a HEAD, whose
    # answers carry no body, so "SlowDown" and the quota code never reached the client.
    response = client.get_object("photos", "cat.jpg")
    try:
        return response.read()
    finally:
        response.close()
        response.release_conn()


def _x(code: str, message: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>"
        "<Resource>/photos/cat.jpg</Resource><RequestId>4442587FB7D0A2F9</RequestId>"
        "<HostId>abc</HostId></Error>"
    )


ROWS: list[Row] = [
    (
        "no_bucket",
        404,
        _x("NoSuchBucket", "The specified bucket does not exist"),
        {},
        NF,
        None,
        "no such bucket",
    ),
    (
        "no_key",
        404,
        _x("NoSuchKey", "The specified key does not exist."),
        {},
        NF,
        None,
        "no such key",
    ),
    ("access_denied", 403, _x("AccessDenied", "Access Denied."), {}, AUTH, None, "access denied"),
    (
        "bad_key_id",
        403,
        _x("InvalidAccessKeyId", "The Access Key Id you provided does not exist in our records."),
        {},
        AUTH,
        None,
        "unknown key id",
    ),
    (
        "signature",
        403,
        _x(
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided.",
        ),
        {},
        AUTH,
        None,
        "wrong secret",
    ),
    (
        "expired",
        400,
        _x("ExpiredToken", "The provided token has expired."),
        {},
        AUTH,
        None,
        "session token expired",
    ),
    (
        "slow_down",
        503,
        _x("SlowDown", "Please reduce your request rate."),
        {"Retry-After": "2"},
        RL,
        2.0,
        "SlowDown",
    ),
    (
        "slow_down_bare",
        503,
        _x("SlowDown", "Please reduce your request rate."),
        {},
        RL,
        None,
        "SlowDown without a delay",
    ),
    (
        "internal",
        500,
        _x("InternalError", "We encountered an internal error, please try again."),
        {},
        NET,
        None,
        "internal error",
    ),
    (
        "unavailable",
        503,
        _x("ServiceUnavailable", "Service is unable to handle request."),
        {},
        NET | RL,
        None,
        "unavailable",
    ),
    (
        "bucket_exists",
        409,
        _x(
            "BucketAlreadyOwnedByYou",
            "Your previous request to create the named bucket succeeded and you already own it.",
        ),
        {},
        EXISTS,
        None,
        "bucket exists",
    ),
    (
        "quota",
        403,
        _x("XMinioAdminBucketQuotaExceeded", "Bucket quota exceeded"),
        {},
        QUOTA,
        None,
        "bucket quota exceeded",
    ),
    (
        "request_timeout",
        400,
        _x(
            "RequestTimeout",
            "Your socket connection to the server was not read from or written to within the timeout period.",
        ),
        {},
        TO,
        None,
        "S3 RequestTimeout",
    ),
    (
        "too_large",
        400,
        _x("EntityTooLarge", "Your proposed upload exceeds the maximum allowed object size."),
        {},
        INT,
        None,
        "object too large",
    ),
]
http_cases(FAM, _call, ROWS, content_type="application/xml")
