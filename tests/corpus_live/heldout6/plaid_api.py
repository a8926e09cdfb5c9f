"""plaid-python (Plaid's generated client, urllib3) against a fake Plaid API on 127.0.0.1
(``Configuration(host=...)``): errors are Plaid's documented bodies ``{"error_type",
"error_code", "error_message", "display_message", "request_id", "causes", "status",
"documentation_url", "suggested_action"}``. Plaid answers most errors with HTTP 400 and tells
them apart only by ``error_type``/``error_code`` (``INVALID_API_KEYS``,
``INVALID_ACCESS_TOKEN``, ``ITEM_LOGIN_REQUIRED``, ``ITEM_NOT_FOUND``, ``INSTITUTION_DOWN``...),
429 ``RATE_LIMIT_EXCEEDED`` carries no delay, 500 ``API_ERROR`` and 503
``PLANNED_MAINTENANCE``. The client raises ``plaid.ApiException`` (or its
``UnauthorizedException``/``ForbiddenException``/``NotFoundException``/``ServiceException``
subclasses) with the status, the raw body and the headers; the transport raises urllib3's
exceptions (its default retries on connect)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, QUOTA, RL, Row, family, http_cases, http_setup

FAM = family("plaid-python", "fake Plaid API", http_setup, half="heldout6")

_TOKEN = "access-sandbox-5cd6e1b1-1b5b-459d-9284-366e2da89755"


def _accounts(url: str) -> Any:
    import plaid
    from plaid.api import plaid_api
    from plaid.model.accounts_get_request import AccountsGetRequest

    conf = plaid.Configuration(
        host=url,
        api_key={
            "clientId": "PLANTED5f1a2b3c4d5e6f7a8b9c0d1e",
            "secret": "PLANTEDplaidsecret0000000000000",
        },
    )
    with plaid.ApiClient(conf) as api:
        client = plaid_api.PlaidApi(api)
        return client.accounts_get(AccountsGetRequest(access_token=_TOKEN), _request_timeout=1)


def _err(
    status: int,
    error_type: str,
    code: str,
    message: str,
    display: str | None = None,
    rid: str = "HNTDNrA8F1shFEW",
) -> dict[str, Any]:
    return {
        "display_message": display,
        "documentation_url": f"https://plaid.com/docs/errors/{error_type.lower().replace('_', '-')}/#{code.lower()}",
        "error_code": code,
        "error_message": message,
        "error_type": error_type,
        "request_id": rid,
        "causes": [],
        "status": status,
        "suggested_action": None,
    }


ROWS: list[Row] = [
    (
        "bad_keys",
        400,
        _err(400, "INVALID_INPUT", "INVALID_API_KEYS", "invalid client_id or secret provided"),
        {},
        AUTH,
        None,
        "Plaid's INVALID_API_KEYS: the client_id/secret pair is wrong (an HTTP 400)",
    ),
    (
        "bad_access_token",
        400,
        _err(
            400,
            "INVALID_INPUT",
            "INVALID_ACCESS_TOKEN",
            "provided access token is in an invalid format. expected format: "
            "access-<environment>-<identifier>",
        ),
        {},
        AUTH | INT,
        None,
        "the Item's access token is malformed or for another environment (HTTP 400)",
    ),
    (
        "login_required",
        400,
        _err(
            400,
            "ITEM_ERROR",
            "ITEM_LOGIN_REQUIRED",
            "the login details of this item have changed (credentials, MFA, or required user "
            "action) and a user login is required to update this information. use Link's "
            "update mode to restore the item to a good state",
            "The login details of this item have changed (credentials, MFA, or required user "
            "action) and a user login is required to update this information.",
        ),
        {},
        AUTH,
        None,
        "the end user's bank login changed: the Item needs re-authentication (HTTP 400)",
    ),
    (
        "item_not_found",
        400,
        _err(
            400,
            "ITEM_ERROR",
            "ITEM_NOT_FOUND",
            "the Item you requested cannot be found. This Item does not exist, has been "
            "previously removed via /item/remove, or has had access removed by the user",
        ),
        {},
        NF,
        None,
        "the Item was removed or never existed (HTTP 400)",
    ),
    (
        "product_not_enabled",
        400,
        _err(
            400,
            "INVALID_REQUEST",
            "INVALID_PRODUCT",
            'client is not authorized to access the following products: ["auth"]',
        ),
        {},
        AUTH,
        None,
        "the Plaid client is not enabled for the product (HTTP 400)",
    ),
    (
        "missing_field",
        400,
        _err(
            400,
            "INVALID_REQUEST",
            "MISSING_FIELDS",
            "the following required fields are missing: access_token",
        ),
        {},
        INT,
        None,
        "the request lacks a required field (the pack's input)",
    ),
    (
        "rate_limited",
        429,
        _err(
            429,
            "RATE_LIMIT_EXCEEDED",
            "ACCOUNTS_LIMIT",
            "rate limit exceeded for attempts to access this item. please try again later",
        ),
        {},
        RL,
        None,
        "the per-Item accounts rate limit; Plaid sends no delay",
    ),
    (
        "addition_limit",
        400,
        _err(
            400,
            "INVALID_INPUT",
            "ADDITION_LIMIT",
            "you have reached the maximum number of additions allowed in this environment. "
            "please contact support to increase this limit",
        ),
        {},
        QUOTA,
        None,
        "the environment's Item addition limit is used up (Plaid's quota, HTTP 400)",
    ),
    (
        "institution_down",
        400,
        _err(
            400,
            "INSTITUTION_ERROR",
            "INSTITUTION_DOWN",
            "this institution is not currently responding to this request. please try again soon",
        ),
        {},
        NET,
        None,
        "the end user's bank is not responding (Plaid reports it as HTTP 400)",
    ),
    (
        "api_error",
        500,
        _err(500, "API_ERROR", "INTERNAL_SERVER_ERROR", "an unexpected error occurred"),
        {},
        NET,
        None,
        "Plaid's internal error",
    ),
    (
        "maintenance",
        503,
        _err(
            503,
            "API_ERROR",
            "PLANNED_MAINTENANCE",
            "the Plaid API is temporarily unavailable due to planned maintenance. visit "
            "https://status.plaid.com/ for more information",
        ),
        {},
        NET,
        None,
        "Plaid is down for planned maintenance",
    ),
]
http_cases(FAM, _accounts, ROWS)


def _garbage(ctx: Any) -> Any:
    return _accounts(f"http://127.0.0.1:{ctx.net.garbage}")


FAM.add("garbage", NET, "the peer answers bytes that are not HTTP", _garbage)
