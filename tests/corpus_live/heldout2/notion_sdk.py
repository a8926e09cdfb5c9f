"""notion-client (the official Python SDK) against a fake Notion API answering its documented
error objects (``{"object": "error", "status": N, "code": "...", "message": "..."}``)."""

from __future__ import annotations

import logging
from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family("notion-client", "fake Notion API (error objects)", http_setup, half="heldout2")

PAGE = "b55c9c91-384d-452b-81db-d1ef79372b75"


def _call(url: str) -> Any:
    from notion_client import Client

    quiet = logging.getLogger("corpus44.notion")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    client = Client(
        auth="secret_PLANTED",
        base_url=url,
        timeout_ms=1000,
        retry=False,
        logger=quiet,
        log_level=logging.CRITICAL,
    )
    return client.pages.retrieve(page_id=PAGE)


def _e(status: int, code: str, message: str) -> dict[str, Any]:
    return {
        "object": "error",
        "status": status,
        "code": code,
        "message": message,
        "request_id": "6f0b4b4c-0d0e-4a5e-9a5c-2c3e5f1b8a77",
    }


ROWS: list[Row] = [
    (
        "unauthorized",
        401,
        _e(401, "unauthorized", "API token is invalid."),
        {},
        AUTH,
        None,
        "the integration token is invalid",
    ),
    (
        "invalid_grant",
        400,
        _e(
            400,
            "invalid_grant",
            "The provided authorization grant (e.g., authorization code, resource owner "
            "credentials) or refresh token is invalid, expired, revoked, does not match the "
            "redirection URI used in the authorization request, or was issued to another client.",
        ),
        {},
        AUTH,
        None,
        "an OAuth grant that is no longer valid: a 400 that is a credential failure",
    ),
    (
        "restricted",
        403,
        _e(
            403,
            "restricted_resource",
            "Given the bearer token used, the client doesn't have permission to perform "
            "this operation.",
        ),
        {},
        AUTH,
        None,
        "the integration lacks the capability",
    ),
    (
        "not_found",
        404,
        _e(
            404,
            "object_not_found",
            f"Could not find page with ID: {PAGE}. Make sure the relevant pages and databases "
            "are shared with your integration.",
        ),
        {},
        NF,
        None,
        "object_not_found",
    ),
    (
        "rate_limited",
        429,
        _e(
            429,
            "rate_limited",
            "This request exceeds the number of requests allowed. Slow down and try again.",
        ),
        {"Retry-After": "7"},
        RL,
        7.0,
        "rate_limited with Retry-After (seconds)",
    ),
    (
        "conflict",
        409,
        _e(
            409,
            "conflict_error",
            "Conflict occurred while saving. Please try again.",
        ),
        {},
        INT | NET | RL,
        None,
        "a transient write collision the docs say to retry: never already_exists",
    ),
    (
        "validation",
        400,
        _e(
            400,
            "validation_error",
            "body failed validation: body.children.length should be ≤ `100`, instead was `101`.",
        ),
        {},
        INT,
        None,
        "the request breaks the API's schema: the pack's bug",
    ),
    (
        "internal",
        500,
        _e(500, "internal_server_error", "Unexpected error occurred."),
        {},
        NET,
        None,
        "Notion failed (5xx)",
    ),
    (
        "db_unavailable",
        503,
        _e(
            503,
            "database_connection_unavailable",
            "Notion's database is unavailable or in an unqueryable state. Try again later.",
        ),
        {},
        NET,
        None,
        "Notion's database is down: retry later",
    ),
    (
        "gateway_timeout",
        504,
        _e(
            504,
            "gateway_timeout",
            "Notion timed out while attempting to complete this request. Please try again later.",
        ),
        {},
        TO,
        None,
        "Notion's own deadline",
    ),
]
http_cases(FAM, _call, ROWS)
