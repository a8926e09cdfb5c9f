"""oss2 (Alibaba Cloud OSS's Python SDK, over requests) against a fake OSS endpoint on
127.0.0.1 (an IP endpoint, so the SDK addresses the bucket by path): every error is OSS's
documented XML ``<Error>`` body (``Code``, ``Message``, ``RequestId``, ``HostId``, ``EC``,
``RecommendDoc``) with ``x-oss-request-id``, ``x-oss-ec`` and ``Server: AliyunOSS``; a HEAD
gets none, only the base64 ``x-oss-err`` header the SDK decodes. Codes and messages from
OSS's error-code pages (403, 404, 409, 429 ``QpsLimitExceeded``, 503
``TotalQpsLimitExceeded``/``ServiceUnavailable``). The SDK raises ``oss2.exceptions.*`` with
the parsed details, and ``RequestError`` around the requests failure."""

from __future__ import annotations

import base64
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("oss2", "fake Alibaba Cloud OSS endpoint", http_setup, half="heldout5")

_BUCKET = "corpus-reports"
_KEY = "exports/2026/q3.csv"
_RID = "6748A1C3E5B9F03733F2C4A1"


def _bucket(url: str) -> Any:
    import oss2

    auth = oss2.Auth("LTAI5tPLANTEDkeyid00000", "PLANTEDosssecret0000000000000000")
    return oss2.Bucket(auth, url, _BUCKET, connect_timeout=1)


def _get(url: str) -> Any:
    return _bucket(url).get_object(_KEY).read()


def _head(url: str) -> Any:
    return _bucket(url).head_object(_KEY)


def _put(url: str) -> Any:
    return _bucket(url).put_object(_KEY, b"a,b\n1,2\n", headers={"x-oss-forbid-overwrite": "true"})


def _create_bucket(url: str) -> Any:
    return _bucket(url).create_bucket()


def _err(code: str, message: str, ec: str, **extra: str) -> str:
    more = "".join(f"\n  <{k}>{v}</{k}>" for k, v in extra.items())
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error>\n'
        f"  <Code>{code}</Code>\n  <Message>{message}</Message>\n"
        f"  <RequestId>{_RID}</RequestId>\n"
        f"  <HostId>{_BUCKET}.oss-cn-hangzhou.aliyuncs.com</HostId>{more}\n"
        f"  <EC>{ec}</EC>\n"
        f"  <RecommendDoc>https://api.aliyun.com/troubleshoot?q={ec}</RecommendDoc>\n"
        "</Error>\n"
    )


def _h(ec: str, **more: str) -> dict[str, str]:
    return {"Server": "AliyunOSS", "x-oss-request-id": _RID, "x-oss-ec": ec, **more}


GET: list[Row] = [
    (
        "bad_key_id",
        403,
        _err(
            "InvalidAccessKeyId",
            "The OSS Access Key Id you provided does not exist in our records.",
            "0002-00000902",
            OSSAccessKeyId="LTAI5tPLANTEDkeyid00000",
        ),
        _h("0002-00000902"),
        AUTH,
        None,
        "the AccessKey ID does not exist",
    ),
    (
        "bad_signature",
        403,
        _err(
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided. "
            "Check your key and signing method.",
            "0002-00000040",
            OSSAccessKeyId="LTAI5tPLANTEDkeyid00000",
        ),
        _h("0002-00000040"),
        AUTH,
        None,
        "the AccessKey secret is wrong",
    ),
    (
        "token_expired",
        403,
        _err(
            "SecurityTokenExpired",
            "The security token you provided has expired.",
            "0002-00000042",
        ),
        _h("0002-00000042"),
        AUTH,
        None,
        "the STS security token has expired",
    ),
    (
        "access_denied",
        403,
        _err(
            "AccessDenied",
            "You have no right to access this object because of bucket acl.",
            "0003-00000001",
        ),
        _h("0003-00000001"),
        AUTH,
        None,
        "the RAM user may not read the object",
    ),
    (
        "user_disabled",
        403,
        _err("UserDisable", "UserDisable", "0003-00000801"),
        _h("0003-00000801"),
        QUOTA | AUTH,
        None,
        "the account is disabled for an overdue payment",
    ),
    (
        "no_such_key",
        404,
        _err("NoSuchKey", "The specified key does not exist.", "0026-00000001", Key=_KEY),
        _h("0026-00000001"),
        NF,
        None,
        "the object does not exist",
    ),
    (
        "no_such_bucket",
        404,
        _err(
            "NoSuchBucket",
            "The specified bucket does not exist.",
            "0015-00000101",
            BucketName=_BUCKET,
        ),
        _h("0015-00000101"),
        NF,
        None,
        "the bucket does not exist",
    ),
    (
        "qps_429",
        429,
        _err("QpsLimitExceeded", "Please reduce your request rate.", "0004-00000301"),
        _h("0004-00000301"),
        RL,
        None,
        "throttled: OSS sends no delay",
    ),
    (
        "total_qps",
        503,
        _err("TotalQpsLimitExceeded", "Max total qps limit is exceeded", "0004-00000302"),
        _h("0004-00000302"),
        RL | NET,
        None,
        "the account's total QPS limit (a 503 with no delay)",
    ),
    (
        "busy",
        503,
        _err(
            "ServiceUnavailable", "Thread pool is almost full, please retry later", "0004-00000303"
        ),
        _h("0004-00000303"),
        NET,
        None,
        "the OSS server is busy",
    ),
    (
        "internal",
        500,
        _err(
            "InternalError",
            "We encountered an internal error. Please try again.",
            "0002-00000001",
        ),
        _h("0002-00000001"),
        NET,
        None,
        "OSS failed",
    ),
]
http_cases(FAM, _get, GET, content_type="application/xml")

_HEAD_404 = base64.b64encode(
    _err("NoSuchKey", "The specified key does not exist.", "0026-00000001").encode()
).decode()
http_cases(
    FAM,
    _head,
    [
        (
            "head_missing",
            404,
            "",
            _h("0026-00000001", **{"x-oss-err": _HEAD_404}),
            NF,
            None,
            "HEAD of a missing object: the error travels base64 in x-oss-err",
        )
    ],
    content_type="application/xml",
    transport=False,
)
http_cases(
    FAM,
    _put,
    [
        (
            "no_overwrite",
            409,
            _err(
                "FileAlreadyExists",
                "The object you specified already exists and can not be overwritten.",
                "0016-00000708",
            ),
            _h("0016-00000708"),
            EXISTS | INT,
            None,
            "x-oss-forbid-overwrite and the object exists",
        ),
        (
            "too_large",
            400,
            _err(
                "EntityTooLarge",
                "Your proposed upload exceeds the maximum allowed size.",
                "0016-00000109",
            ),
            _h("0016-00000109"),
            INT,
            None,
            "the upload is over the size limit (the pack's input)",
        ),
    ],
    content_type="application/xml",
    transport=False,
)
http_cases(
    FAM,
    _create_bucket,
    [
        (
            "bucket_taken",
            409,
            _err(
                "BucketAlreadyExists",
                "The requested bucket name is not available. The bucket namespace is shared by "
                "all users of the system. Please select a different name and try again.",
                "0015-00000104",
                BucketName=_BUCKET,
            ),
            _h("0015-00000104"),
            EXISTS | INT,
            None,
            "another account owns the bucket name",
        )
    ],
    content_type="application/xml",
    transport=False,
)
