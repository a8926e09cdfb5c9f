"""atlassian-python-api's ``Confluence`` (its REST wrapper) against a fake Confluence answering
its documented error bodies: the Server/Data Center shape ``{"statusCode", "data": {...},
"message", "reason"}`` and the Cloud shape ``{"code", "message"}``, with ``Retry-After`` on
429. A duplicate page title is a 400 there, whose message says it already exists."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, EXISTS, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("atlassian-confluence", "fake Confluence REST API", http_setup, half="heldout4")


def _confluence(url: str) -> Any:
    from atlassian import Confluence

    return Confluence(url, username="bot@example.org", password="PLANTED-api-token", timeout=1)


def _get(url: str) -> Any:
    return _confluence(url).get("rest/api/content/98765", params={"expand": "body.storage"})


def _create(url: str) -> Any:
    return _confluence(url).post(
        "rest/api/content",
        data={
            "type": "page",
            "title": "Release notes",
            "space": {"key": "ENG"},
            "body": {"storage": {"value": "<p>v2</p>", "representation": "storage"}},
        },
    )


def _dc(status: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "statusCode": status,
        "data": {
            "authorized": status not in (401, 403),
            "valid": True,
            "allowedInReadOnlyMode": True,
            "errors": [],
            "successful": False,
        },
        "message": message,
        "reason": reason,
    }


GET: list[Row] = [
    (
        "no_content",
        404,
        _dc(404, "Not Found", "No content found with id: ContentId{id=98765}"),
        {},
        NF,
        None,
        "the page does not exist",
    ),
    (
        "cloud_unauthorized",
        401,
        {"code": 401, "message": "Unauthorized; scope does not match"},
        {"WWW-Authenticate": 'OAuth realm="https%3A%2F%2Fexample.atlassian.net"'},
        AUTH,
        None,
        "the API token is rejected (Cloud's shape)",
    ),
    (
        "forbidden",
        403,
        _dc(403, "Forbidden", "User not permitted to view content with id 98765"),
        {},
        AUTH,
        None,
        "the user may not view the page",
    ),
    (
        "rate_limited",
        429,
        {"code": 429, "message": "Rate limit exceeded."},
        {"Retry-After": "1", "X-RateLimit-NearLimit": "true"},
        RL,
        1.0,
        "Confluence Cloud's rate limit, with the server's delay",
    ),
    (
        "server_error",
        500,
        _dc(500, "Internal Server Error", "java.lang.NullPointerException"),
        {},
        NET,
        None,
        "Confluence failed",
    ),
    (
        "proxy_html",
        502,
        "<html><head><title>502 Proxy Error</title></head><body><h1>Proxy Error</h1>"
        "<p>The proxy server received an invalid response from an upstream server.</p>"
        "</body></html>",
        {"Content-Type": "text/html; charset=iso-8859-1"},
        NET,
        None,
        "the reverse proxy's page: Confluence is down",
    ),
]
http_cases(FAM, _get, GET)
CREATE: list[Row] = [
    (
        "title_exists",
        400,
        _dc(
            400,
            "Bad Request",
            "A page with this title already exists: A page already exists with the same TITLE "
            "in this space",
        ),
        {},
        EXISTS,
        None,
        "a page with that title exists (Confluence answers 400)",
    ),
    (
        "space_unknown",
        404,
        _dc(404, "Not Found", "No space with key : ENG"),
        {},
        NF,
        None,
        "the space does not exist",
    ),
    (
        "bad_storage",
        400,
        _dc(
            400,
            "Bad Request",
            "Error parsing xhtml: Unexpected close tag </p>; expected </div>. at [row,col "
            "{unknown-source}]: [1,14]",
        ),
        {},
        INT,
        None,
        "the page body is malformed XHTML (the pack's input)",
    ),
    (
        "too_large",
        413,
        _dc(413, "Request Entity Too Large", "Request body exceeds the maximum size of 5 MB"),
        {},
        INT,
        None,
        "the page is over the size limit: it never passes",
    ),
]
http_cases(FAM, _create, CREATE, transport=False)
