"""The ``rclone`` CLI (Debian's rclone 1.60) with its S3 backend, configured through
``RCLONE_CONFIG_*`` environment variables as a pack would, against a fake S3 endpoint
answering S3's documented XML errors (``<Error><Code>...</Code><Message>...</Message>``):
``InvalidAccessKeyId``, ``SignatureDoesNotMatch``, ``AccessDenied``, ``NoSuchBucket``,
``NoSuchKey``, ``SlowDown``, ``InternalError``, ``EntityTooLarge``, MinIO's quota and
storage-full codes. Each failure is rclone's exit status and its stderr log lines."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    Http,
    Reply,
    family,
    http_setup,
    require,
    transport_cases,
)


def _setup(stack: Any, work: Any) -> Http:
    require("rclone")
    return http_setup(stack, work)


FAM = family("rclone", "the rclone CLI against a fake S3 endpoint", _setup, half="heldout4")


def _rclone(url: str, *args: str) -> None:
    # no AWS_* of the host (a CA bundle, a profile) reaches the S3 backend
    env = dict(
        {k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        RCLONE_CONFIG="/dev/null",
        RCLONE_CONFIG_STORE_TYPE="s3",
        RCLONE_CONFIG_STORE_PROVIDER="Other",
        RCLONE_CONFIG_STORE_ENV_AUTH="false",
        RCLONE_CONFIG_STORE_ACCESS_KEY_ID="AKIAPLANTED00000000",
        RCLONE_CONFIG_STORE_SECRET_ACCESS_KEY="PLANTEDsecretkey0000000000000000000000",
        RCLONE_CONFIG_STORE_ENDPOINT=url,
        RCLONE_CONFIG_STORE_REGION="us-east-1",
        RCLONE_CONFIG_STORE_FORCE_PATH_STYLE="true",
    )
    argv = [
        "rclone",
        *args,
        "--retries",
        "1",
        "--low-level-retries",
        "1",
        "--contimeout",
        "1s",
        "--timeout",
        "1s",
    ]
    subprocess.run(argv, capture_output=True, check=True, timeout=20, env=env)


def _ls(url: str) -> None:
    _rclone(url, "lsf", "store:backups/daily/")


def _cat(url: str) -> None:
    _rclone(url, "cat", "store:backups/daily/db.dump")


def _put(url: str) -> None:
    with tempfile.TemporaryDirectory(prefix="corpus44-rclone-") as tmp:
        src = Path(tmp) / "db.dump"
        src.write_bytes(b"PGDMP" + b"\0" * 2048)
        _rclone(url, "copyto", str(src), "store:backups/daily/db.dump")


def _mkdir(url: str) -> None:
    _rclone(url, "mkdir", "store:backups")


def _err(code: str, message: str, resource: str = "/backups") -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>"
        f"<Resource>{resource}</Resource><RequestId>4442587FB7D0A2F9</RequestId></Error>"
    )


def _case(
    id: str,
    op: Any,
    status: int,
    body: str,
    expect: frozenset[str],
    why: str,
    headers: dict[str, str] | None = None,
) -> None:
    def run(ctx: Http) -> Any:
        ctx.http.set(status, body, headers or {}, "application/xml")
        if op is _put:  # the object is not there yet: rclone's HEAD before the PUT says so
            ctx.http.route = lambda m, p, b: Reply(404, b"", {}, "") if m == "HEAD" else None
        return op(ctx.http.url)

    FAM.add(id, expect, f"HTTP {status}: {why}", run)


_case(
    "bad_access_key",
    _ls,
    403,
    _err("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."),
    AUTH,
    "the access key does not exist",
)
_case(
    "bad_signature",
    _ls,
    403,
    _err(
        "SignatureDoesNotMatch",
        "The request signature we calculated does not match the signature you provided. "
        "Check your key and signing method.",
    ),
    AUTH,
    "the secret key is wrong",
)
_case(
    "access_denied",
    _ls,
    403,
    _err("AccessDenied", "Access Denied"),
    AUTH,
    "the policy refuses the listing",
)
_case(
    "no_bucket",
    _ls,
    404,
    _err("NoSuchBucket", "The specified bucket does not exist"),
    NF,
    "the bucket does not exist",
)
_case(
    "no_key",
    _cat,
    404,
    _err("NoSuchKey", "The specified key does not exist.", "/backups/daily/db.dump"),
    NF,
    "the object does not exist",
)
_case(
    "slow_down",
    _ls,
    503,
    _err("SlowDown", "Please reduce your request rate."),
    RL,
    "S3 asks the caller to slow down",
)
_case(
    "internal",
    _ls,
    500,
    _err("InternalError", "We encountered an internal error. Please try again."),
    NET,
    "the store failed",
)
_case(
    "bucket_quota",
    _put,
    400,
    _err("XMinioAdminBucketQuotaExceeded", "Bucket quota exceeded", "/backups/daily/db.dump"),
    QUOTA,
    "the bucket's hard quota (MinIO's code) is full: waiting does not help",
)
_case(
    "storage_full",
    _put,
    507,
    _err(
        "XMinioStorageFull",
        "Storage backend has reached its minimum free drive threshold. Please delete a few "
        "objects to proceed.",
        "/backups/daily/db.dump",
    ),
    QUOTA | NET,
    "the server's drives are full",
)
_case(
    "too_large",
    _put,
    400,
    _err(
        "EntityTooLarge",
        "Your proposed upload exceeds the maximum allowed object size.",
        "/backups/daily/db.dump",
    ),
    INT,
    "the object is over the size limit: it never passes",
)
_case(
    "invalid_bucket_name",
    _mkdir,
    400,
    _err("InvalidBucketName", "The specified bucket is not valid."),
    INT,
    "the bucket name is malformed (the pack's input)",
)
transport_cases(FAM, lambda host, port: _ls(f"http://{host}:{port}"), dns_port=80)
