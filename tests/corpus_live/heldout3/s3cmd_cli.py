"""s3cmd (Debian's ``s3cmd``), the S3 command-line client, against a fake S3 endpoint
answering the documented S3 error documents (``<Error><Code>NoSuchKey</Code>...``): each
failure is s3cmd's exit status and its ``ERROR: S3 error: 404 (NoSuchKey): ...`` stderr.
Only the client errors: s3cmd retries every 5xx, 429 and transport failure five times with
waits of 3 to 15 s (no option turns that off), so those would take 45 s a case."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NF,
    QUOTA,
    FakeHTTP,
    cli,
    fake_http,
    family,
    require,
)


@dataclass
class S3:
    http: FakeHTTP
    config: Path


def _setup(stack: contextlib.ExitStack, work: Path) -> S3:
    require("s3cmd")
    http = fake_http(stack)
    config = work / "s3cfg"
    config.write_text(
        "[default]\n"
        "access_key = AKIAPLANTEDS3CMDKEY00\n"
        "secret_key = PLANTED/s3cmd/secret/key/0000000000000000\n"
        f"host_base = 127.0.0.1:{http.port}\n"
        f"host_bucket = 127.0.0.1:{http.port}\n"
        "use_https = False\n"
        "signature_v2 = False\n"
        "socket_timeout = 2\n"
        "check_ssl_certificate = False\n"
    )
    return S3(http, config)


FAM = family("s3cmd", "fake S3 endpoint (S3 error documents)", _setup, half="heldout3")


def _error(code: str, message: str, **extra: str) -> str:
    more = "".join(f"<{k}>{v}</{k}>" for k, v in extra.items())
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>{more}"
        "<RequestId>4442587FB7D0A2F9</RequestId>"
        "<HostId>eftixk72aD6Ap51TnqcoF8eFidJG9Z/2mkiDFu8yU9AS1ed4OpIszj7UDNEHGran</HostId>"
        "</Error>"
    )


def _s3(c: S3, *args: str, status: int, body: str) -> None:
    c.http.set(status, body, {"x-amz-request-id": "4442587FB7D0A2F9"}, "application/xml")
    cli(["s3cmd", "-c", str(c.config), "--no-progress", *args], timeout=20)


def _add(
    id: str, args: list[str], status: int, body: str, expect: frozenset[str], why: str
) -> None:
    def run(c: S3) -> Any:
        return _s3(c, *args, status=status, body=body)

    FAM.add(id, expect, f"HTTP {status}: {why}", run)


_GET = ["get", "--force", "s3://reports/2024/q3.csv", "/dev/null"]
_LS = ["ls", "s3://reports/"]
_MB = ["mb", "s3://reports"]
_INFO = ["info", "s3://reports/2024/q3.csv"]

_add(
    "no_such_key",
    _GET,
    404,
    _error("NoSuchKey", "The specified key does not exist.", Key="2024/q3.csv"),
    NF,
    "the object does not exist",
)
_add(
    "no_such_bucket",
    _LS,
    404,
    _error("NoSuchBucket", "The specified bucket does not exist", BucketName="reports"),
    NF,
    "the bucket does not exist",
)
_add(
    "access_denied",
    _LS,
    403,
    _error("AccessDenied", "Access Denied"),
    AUTH,
    "the key's policy refuses the listing",
)
_add(
    "bad_key_id",
    _INFO,
    403,
    _error(
        "InvalidAccessKeyId",
        "The AWS Access Key Id you provided does not exist in our records.",
        AWSAccessKeyId="AKIAPLANTEDS3CMDKEY00",
    ),
    AUTH,
    "the access key does not exist",
)
_add(
    "bad_signature",
    _INFO,
    403,
    _error(
        "SignatureDoesNotMatch",
        "The request signature we calculated does not match the signature you provided. "
        "Check your key and signing method.",
    ),
    AUTH,
    "the secret key is wrong",
)
_add(
    "bucket_owned",
    _MB,
    409,
    _error(
        "BucketAlreadyOwnedByYou",
        "Your previous request to create the named bucket succeeded and you already own it.",
        BucketName="reports",
    ),
    EXISTS,
    "the bucket to create exists (yours)",
)
_add(
    "bucket_taken",
    _MB,
    409,
    _error(
        "BucketAlreadyExists",
        "The requested bucket name is not available. The bucket namespace is shared by all "
        "users of the system. Please select a different name and try again.",
        BucketName="reports",
    ),
    EXISTS,
    "the bucket name is taken by another account",
)
_add(
    "too_many_buckets",
    _MB,
    400,
    _error("TooManyBuckets", "You have attempted to create more buckets than allowed"),
    QUOTA,
    "the account's bucket quota is used up",
)
_add(
    "invalid_bucket_name",
    ["mb", "s3://reports-2024"],
    400,
    _error("InvalidBucketName", "The specified bucket is not valid.", BucketName="reports-2024"),
    INT,
    "the bucket name is invalid (the pack's input)",
)
_add(
    "invalid_range",
    _GET,
    416,
    _error("InvalidRange", "The requested range is not satisfiable", RangeRequested="bytes=9-"),
    INT,
    "the range asked for is beyond the object",
)
_add(
    "precondition",
    _GET,
    412,
    _error(
        "PreconditionFailed",
        "At least one of the pre-conditions you specified did not hold",
        Condition="If-Match",
    ),
    INT,
    "a precondition failed: re-read, do not retry the same call",
)
_add(
    "method_not_allowed",
    _INFO,
    405,
    _error(
        "MethodNotAllowed",
        "The specified method is not allowed against this resource.",
        Method="GET",
        ResourceType="OBJECT",
    ),
    INT,
    "the operation is not allowed on this resource",
)
