"""dropbox (Dropbox's Python SDK) against a fake Dropbox API v2 answering its documented
error bodies: route errors on HTTP 409 (``{"error_summary": "path/not_found/..", "error":
{...}}``), auth errors on 401, ``too_many_requests`` / ``too_many_write_operations`` on 429
with a ``retry_after``. The SDK only speaks HTTPS to Dropbox's hosts: a subclass points its
route URLs at the fake over plain HTTP, nothing else changes."""

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
    Http,
    family,
    http_setup,
    transport_cases,
)

FAM = family("dropbox", "fake Dropbox API v2", http_setup, half="heldout3")


def _dbx(host: str, port: int) -> Any:
    import dropbox

    class Loopback(dropbox.Dropbox):  # type: ignore[misc]
        def _get_route_url(self, hostname: str, route_name: str) -> str:
            return f"http://{host}:{port}/2/{route_name}"

    return Loopback(
        "sl.PLANTED-dropbox-token",
        max_retries_on_error=0,
        max_retries_on_rate_limit=0,
        timeout=1,
    )


def _metadata(host: str, port: int) -> Any:
    return _dbx(host, port).files_get_metadata("/reports/q3.pdf")


def _mkdir(host: str, port: int) -> Any:
    return _dbx(host, port).files_create_folder_v2("/reports")


def _route(summary: str, error: dict[str, Any]) -> dict[str, Any]:
    return {"error_summary": summary, "error": error}


def _add(
    id: str,
    call: Any,
    status: int,
    body: Any,
    expect: frozenset[str],
    why: str,
    *,
    headers: dict[str, str] | None = None,
    content_type: str = "application/json",
    retry_after: float | None = None,
) -> None:
    def run(ctx: Http) -> Any:
        ctx.http.set(status, body, headers, content_type)
        return call("127.0.0.1", ctx.http.port)

    FAM.add(id, expect, f"HTTP {status}: {why}", run, retry_after=retry_after)


_add(
    "path_not_found",
    _metadata,
    409,
    _route("path/not_found/..", {".tag": "path", "path": {".tag": "not_found"}}),
    NF,
    "a route error on 409: the path does not exist",
)
_add(
    "malformed_path",
    _metadata,
    409,
    _route("path/malformed_path/..", {".tag": "path", "path": {".tag": "malformed_path"}}),
    INT,
    "the path given is malformed (the pack's input)",
)
_add(
    "folder_exists",
    _mkdir,
    409,
    _route(
        "path/conflict/folder/..",
        {".tag": "path", "path": {".tag": "conflict", "conflict": {".tag": "folder"}}},
    ),
    EXISTS,
    "a folder is already there",
)
_add(
    "insufficient_space",
    _mkdir,
    409,
    _route("path/insufficient_space/..", {".tag": "path", "path": {".tag": "insufficient_space"}}),
    QUOTA,
    "the account's storage is full",
)
_add(
    "no_write_permission",
    _mkdir,
    409,
    _route(
        "path/no_write_permission/..", {".tag": "path", "path": {".tag": "no_write_permission"}}
    ),
    AUTH,
    "the user may not write there",
)
_add(
    "invalid_token",
    _metadata,
    401,
    _route("invalid_access_token/..", {".tag": "invalid_access_token"}),
    AUTH,
    "the access token is invalid",
    headers={"WWW-Authenticate": 'Bearer realm="Dropbox-API"'},
)
_add(
    "expired_token",
    _metadata,
    401,
    _route("expired_access_token/", {".tag": "expired_access_token"}),
    AUTH,
    "the short-lived access token expired",
)
_add(
    "missing_scope",
    _mkdir,
    401,
    _route(
        "missing_scope/.",
        {".tag": "missing_scope", "required_scope": "files.content.write"},
    ),
    AUTH,
    "the app was not granted files.content.write",
)
_add(
    "too_many_requests",
    _metadata,
    429,
    _route("too_many_requests/..", {"reason": {".tag": "too_many_requests"}, "retry_after": 5}),
    RL,
    "the app's rate limit, retry_after in the decoded error",
    headers={"Retry-After": "5"},
    retry_after=5.0,
)
_add(
    "too_many_writes",
    _mkdir,
    429,
    _route(
        "too_many_write_operations/..",
        {"reason": {".tag": "too_many_write_operations"}, "retry_after": 1},
    ),
    RL,
    "namespace lock contention: too many concurrent writes, retry_after 1",
    retry_after=1.0,
)
_add(
    "bad_input",
    _metadata,
    400,
    'Error in call to API function "files/get_metadata": request body: path: '
    "'reports' did not match pattern '(/(.|[\\r\\n])*|id:.*)|(rev:[0-9a-f]{9,})|(ns:[0-9]+(/.*)?)'",
    INT,
    "the request is malformed (a plain-text 400)",
    content_type="text/plain; charset=utf-8",
)
_add(
    "internal",
    _metadata,
    500,
    "",
    NET,
    "Dropbox failed",
    content_type="text/plain",
)
_add(
    "unavailable",
    _mkdir,
    503,
    "",
    NET,
    "Dropbox is unavailable",
    content_type="text/plain",
)
transport_cases(FAM, _metadata, dns_port=80)
