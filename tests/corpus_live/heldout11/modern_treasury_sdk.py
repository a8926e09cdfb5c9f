"""modern-treasury (Modern Treasury's payment-operations API, a Stainless-generated SDK over
httpx) through its async client ``AsyncModernTreasury`` against a fake Modern Treasury API on
127.0.0.1 (``base_url``, retries off, a 1 s timeout). Errors are Modern Treasury's
``{"errors": {"code", "message", "parameter"}}`` bodies; the SDK raises one exception class per
status. Faked: the API (bodies after Modern Treasury's documented error reference); real: the
SDK and httpx."""

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
    Row,
    family,
    http_cases,
    http_setup,
    run_async,
)

FAM = family(
    "modern-treasury", "fake Modern Treasury API (async client)", http_setup, half="heldout11"
)

_KEY = "PLANTEDmtKey_live-7f2c91d0a4b34e1b"
_ORG = "5c0b2f8e-6a1d-4f3e-9b7a-2d4c8e1f0a93"


async def _create(url: str) -> Any:
    from modern_treasury import AsyncModernTreasury

    async with AsyncModernTreasury(
        api_key=_KEY, organization_id=_ORG, base_url=url, max_retries=0, timeout=1.0
    ) as client:
        return await client.payment_orders.create(
            amount=125000,
            direction="credit",
            originating_account_id="0f8e3a2b-1c4d-4e5f-8a9b-7c6d5e4f3a2b",
            type="ach",
            receiving_account_id="9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d",
        )


def _call(url: str) -> Any:
    return run_async(_create(url))


def _e(code: str, message: str, parameter: str | None = None) -> dict[str, Any]:
    return {"errors": {"code": code, "message": message, "parameter": parameter}}


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _e("unauthorized", "The API key or organization ID is invalid."),
        {},
        AUTH,
        None,
        "the API key is wrong",
    ),
    (
        "no_permission",
        403,
        _e("forbidden", "This API key does not have permission to create payment orders."),
        {},
        AUTH,
        None,
        "a read-only key may not create payment orders",
    ),
    (
        "account_not_found",
        404,
        _e(
            "resource_not_found",
            "Originating account 0f8e3a2b-1c4d-4e5f-8a9b-7c6d5e4f3a2b not found",
            "originating_account_id",
        ),
        {},
        NF,
        None,
        "the originating internal account does not exist",
    ),
    (
        "idempotency_conflict",
        409,
        _e(
            "idempotency_key_in_use",
            "A request with this Idempotency-Key has already been made with different parameters.",
        ),
        {},
        EXISTS | INT,
        None,
        "the idempotency key was already used for another payment order",
    ),
    (
        "amount_invalid",
        422,
        _e("parameter_invalid", "Amount must be a positive integer", "amount"),
        {},
        INT,
        None,
        "the caller's amount is refused: retrying never passes",
    ),
    (
        "missing_param",
        400,
        _e(
            "parameter_missing",
            "Missing required parameter: receiving_account_id",
            "receiving_account_id",
        ),
        {},
        INT,
        None,
        "the caller left out a required parameter",
    ),
    (
        "insufficient_balance",
        422,
        _e(
            "insufficient_funds",
            "The originating account does not have sufficient available balance for this payment.",
            "amount",
        ),
        {},
        QUOTA | INT,
        None,
        "the account's balance is too low for the payment",
    ),
    (
        "rate_limited",
        429,
        _e("rate_limit_exceeded", "You have exceeded the rate limit. Please retry later."),
        {"Retry-After": "2"},
        RL,
        2.0,
        "too many requests, with the server's delay",
    ),
    (
        "server_error",
        500,
        _e("internal_server_error", "An internal server error occurred."),
        {},
        NET,
        None,
        "Modern Treasury failed",
    ),
]
http_cases(FAM, _call, ROWS, transport=False)
HTML: list[Row] = [
    (
        "bad_gateway_html",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad"
        " Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {},
        NET,
        None,
        "a proxy in front of the API answered its own HTML page",
    ),
]
http_cases(FAM, _call, HTML, content_type="text/html")
