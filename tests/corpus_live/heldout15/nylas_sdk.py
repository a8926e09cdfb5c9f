"""nylas (the Nylas v3 Python SDK, requests underneath) against a fake Nylas API v3 answering
its documented error bodies (``{"request_id", "error": {"type", "message", "provider_error"}}``)
and statuses: 401 bad API key, 404 unknown grant, 423 blocked, 429 from Nylas and from the
mail provider (with ``Retry-After``), 504 provider errors, 500 and 502 from Nylas, and an OAuth
token exchange failure; plus the SDK's own timeout and the transport failures."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("nylas", "fake Nylas API v3", http_setup, half="heldout15")

_GRANT = "e19f8e1a-eb1c-41c0-b6a6-d2e59daf7f47"


def _list(url: str) -> Any:
    from nylas import Client  # type: ignore[import-untyped]

    client = Client(api_key="nyk_v0_PLANTEDnylaskey", api_uri=url, timeout=1)
    return client.messages.list(identifier=_GRANT, query_params={"limit": 5})


def _e(type: str, message: str, provider: dict[str, Any] | None = None) -> dict[str, Any]:
    err: dict[str, Any] = {"type": type, "message": message}
    if provider is not None:
        err["provider_error"] = provider
    return {"request_id": "5fa64c92-e840-4357-86b9-2aa364d35b88", "error": err}


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _e("api.authentication_error", "Unauthorized"),
        {},
        AUTH,
        None,
        "the API key is not valid",
    ),
    (
        "grant_not_found",
        404,
        _e("api.not_found_error", f"grant not found: {_GRANT}"),
        {},
        NF,
        None,
        "the grant (connected account) does not exist",
    ),
    (
        "grant_expired",
        401,
        _e(
            "api.authentication_error",
            "Grant is expired. Please re-authenticate the account.",
            {"error": "invalid_grant", "error_description": "Token has been expired or revoked."},
        ),
        {},
        AUTH,
        None,
        "the account's provider token was revoked: the user must re-authenticate",
    ),
    (
        "resource_blocked",
        423,
        _e("api.resource_blocked", "Resource blocked, contact administrator."),
        {},
        AUTH | INT,
        None,
        "the application is blocked by Nylas",
    ),
    (
        "nylas_rate_limited",
        429,
        _e("nylas_rate_limit_exceeded", "Too many requests. Please try again later."),
        {"Retry-After": "1"},
        RL,
        1.0,
        "over Nylas's per-grant limit, with the server's delay",
    ),
    (
        "provider_rate_limited",
        429,
        _e(
            "rate_limit_error",
            "Account throttled by provider.",
            {
                "error": {
                    "code": 429,
                    "message": "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user'",
                    "status": "RESOURCE_EXHAUSTED",
                }
            },
        ),
        {"Retry-After": "2"},
        RL,
        2.0,
        "Google throttles the mailbox behind Nylas, with the provider's delay",
    ),
    (
        "provider_error",
        504,
        _e(
            "api.provider_error",
            "Provider error message.",
            {"error": {"code": 503, "message": "The service is currently unavailable."}},
        ),
        {},
        NET,
        None,
        "the mail provider behind Nylas failed",
    ),
    (
        "internal",
        500,
        _e("api.internal_error", "Internal error, contact administrator."),
        {},
        NET,
        None,
        "Nylas failed",
    ),
    (
        "bad_gateway",
        502,
        _e("api.internal_error", "The upstream server is unavailable, please try again..."),
        {},
        NET,
        None,
        "Nylas's upstream is unavailable",
    ),
    (
        "bad_query",
        400,
        _e("api.invalid_request_error", "invalid limit: must be between 1 and 200"),
        {},
        INT,
        None,
        "a malformed query parameter (the pack's input)",
    ),
    (
        "bad_payload",
        400,
        _e("api.invalid_request_payload", "Invalid JSON payload format."),
        {},
        INT,
        None,
        "the request body is not valid (the pack's input)",
    ),
]
http_cases(FAM, _list, ROWS)
