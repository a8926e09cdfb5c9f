"""storage3 (Supabase's Storage client, its async ``AsyncStorageClient`` over httpx) against
a fake Supabase Storage API (``/storage/v1``) on 127.0.0.1, the client given its own
``httpx.AsyncClient`` with a 1 s timeout (the library's advice: its ``timeout`` argument is
deprecated). Supabase Storage answers errors as ``{statusCode, error, message}`` (newer
servers add ``code``), ``statusCode`` a string that need not match the HTTP status (a
row-level-security refusal and an expired JWT come back as HTTP 400 carrying ``"403"``); the
project's API gateway (Kong) answers its own rate limit as ``{"message": "API rate limit
exceeded"}`` with ``Retry-After``. The client raises ``StorageApiError`` for every status,
``code`` ``LibraryError`` when the body is not in its shape, and lets httpx's errors through
for the transport. Faked: the Storage API and its gateway; real: the client and httpx."""

from __future__ import annotations

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
    run_async,
)

FAM = family("storage3", "fake Supabase Storage API", http_setup, half="heldout14")

_KEY = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.PLANTED.c2lnbmF0dXJl"
_H = {"sb-request-id": "019a3f2e-7c1d-7b4a-9e8f-2a3b4c5d6e7f", "x-kong-upstream-latency": "12"}


def _client(url: str) -> Any:
    import httpx
    from storage3 import AsyncStorageClient

    headers = {"apikey": _KEY, "Authorization": f"Bearer {_KEY}"}
    return AsyncStorageClient(
        url + "/storage/v1",
        headers,
        http_client=httpx.AsyncClient(headers=headers, timeout=1.0),
    )


async def _download(url: str) -> Any:
    async with _client(url) as storage:
        return await storage.from_("invoices").download("2026/11/invoice-1042.pdf")


async def _upload(url: str) -> Any:
    async with _client(url) as storage:
        return await storage.from_("invoices").upload(
            "2026/11/invoice-1042.pdf",
            b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n",
            {"content-type": "application/pdf"},
        )


async def _bucket(url: str) -> Any:
    async with _client(url) as storage:
        return await storage.get_bucket("invoices")


def _e(status: str, error: str, message: str, code: str | None = None) -> dict[str, Any]:
    body = {"statusCode": status, "error": error, "message": message}
    if code is not None:
        body["code"] = code
    return body


DOWNLOAD: list[Row] = [
    (
        "object_missing",
        400,
        _e("404", "not_found", "Object not found"),
        _H,
        NF,
        None,
        "no object at that path in the bucket",
    ),
    (
        "jwt_expired",
        400,
        _e("403", "Unauthorized", '"exp" claim timestamp check failed'),
        _H,
        AUTH,
        None,
        "the access token sent has expired",
    ),
    (
        "gateway_rate_limit",
        429,
        {"message": "API rate limit exceeded"},
        dict(_H, **{"Retry-After": "12", "X-RateLimit-Remaining-Minute": "0"}),
        RL,
        12.0,
        "the project's API gateway throttled the request, a wait given",
    ),
    (
        "db_timeout",
        544,
        _e(
            "544",
            "DatabaseTimeout",
            "The connection to the database timed out",
            "DatabaseTimeout",
        ),
        _H,
        TO,
        None,
        "Storage's metadata query ran out of time",
    ),
    (
        "server_error",
        500,
        _e("500", "internal", "Internal Server Error", "InternalError"),
        _H,
        NET,
        None,
        "Storage failed while serving the object",
    ),
    (
        "edge_502",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502"
        " Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html", "cf-ray": "8f2d3e4a5b6c7d8e-FRA"},
        NET,
        None,
        "the edge got no answer from the project",
    ),
]
http_cases(FAM, lambda url: run_async(_download(url)), DOWNLOAD)

UPLOAD: list[Row] = [
    (
        "rls_denied",
        400,
        _e("403", "Unauthorized", "new row violates row-level security policy"),
        _H,
        AUTH,
        None,
        "the bucket's row-level-security policy refuses this key the insert",
    ),
    (
        "duplicate",
        400,
        _e("409", "Duplicate", "The resource already exists"),
        _H,
        EXISTS,
        None,
        "an object exists at that path and upsert was not asked for",
    ),
    (
        "too_large",
        413,
        _e(
            "413",
            "Payload too large",
            "The object exceeded the maximum allowed size",
            "EntityTooLarge",
        ),
        _H,
        QUOTA | INT,
        None,
        "the file is over the project's upload size limit",
    ),
    (
        "invalid_key",
        400,
        _e("400", "Invalid Input", "Invalid key: 2026/11/invoice-1042.pdf", "InvalidKey"),
        _H,
        INT,
        None,
        "the object key is not one Storage accepts",
    ),
]
http_cases(FAM, lambda url: run_async(_upload(url)), UPLOAD, transport=False)

BUCKET: list[Row] = [
    (
        "bucket_missing",
        400,
        _e("404", "Bucket not found", "Bucket not found"),
        _H,
        NF,
        None,
        "no bucket of that name in the project",
    ),
]
http_cases(FAM, lambda url: run_async(_bucket(url)), BUCKET, transport=False)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: run_async(_download(f"http://127.0.0.1:{c.net.garbage}")),
)
