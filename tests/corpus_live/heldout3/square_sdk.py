"""squareup (Square's Python SDK, Fern-generated) against a fake Square API answering its
documented error bodies (``{"errors": [{"category": "PAYMENT_METHOD_ERROR", "code":
"CARD_DECLINED", "detail": ...}]}``): a 402 that is a declined card, not a quota."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("square", "fake Square API", http_setup, half="heldout3")

_OPTS = {"max_retries": 0, "timeout_in_seconds": 1}


def _client(url: str) -> Any:
    from square import Square

    return Square(token="EAAAPLANTEDsquareaccesstoken", base_url=url, timeout=1)


def _pay(url: str) -> Any:
    return _client(url).payments.create(
        source_id="cnon:card-nonce-ok",
        idempotency_key="7b0f3ec5-086a-4871-8f13-3c81b3875218",
        amount_money={"amount": 1000, "currency": "USD"},
        request_options=_OPTS,
    )


def _customer(url: str) -> Any:
    return _client(url).customers.get("JDKYHBWT1D4F8MFH63DBMEN8Y4", request_options=_OPTS)


def _e(category: str, code: str, detail: str, field: str | None = None) -> dict[str, Any]:
    error = {"category": category, "code": code, "detail": detail}
    if field:
        error["field"] = field
    return {"errors": [error]}


PAY: list[Row] = [
    (
        "unauthorized",
        401,
        _e(
            "AUTHENTICATION_ERROR",
            "UNAUTHORIZED",
            "This request could not be authorized.",
        ),
        {},
        AUTH,
        None,
        "the access token is invalid",
    ),
    (
        "insufficient_scopes",
        403,
        _e(
            "AUTHENTICATION_ERROR",
            "INSUFFICIENT_SCOPES",
            "The merchant has not given your application sufficient permissions to do that. The "
            "merchant must authorize your application for the following scopes: PAYMENTS_WRITE",
        ),
        {},
        AUTH,
        None,
        "the token lacks PAYMENTS_WRITE",
    ),
    (
        "card_declined",
        402,
        _e(
            "PAYMENT_METHOD_ERROR",
            "CARD_DECLINED",
            "Authorization error: 'CARD_DECLINED'",
        ),
        {},
        INT,
        None,
        "a 402 that is the buyer's card declined: a business outcome, not the account's quota",
    ),
    (
        "insufficient_funds",
        402,
        _e(
            "PAYMENT_METHOD_ERROR",
            "INSUFFICIENT_FUNDS",
            "Authorization error: 'INSUFFICIENT_FUNDS'",
        ),
        {},
        INT,
        None,
        "the card has insufficient funds (the buyer's, not this account's)",
    ),
    (
        "idempotency_reused",
        400,
        _e(
            "INVALID_REQUEST_ERROR",
            "IDEMPOTENCY_KEY_REUSED",
            "The idempotency key can only be retried with the same request data.",
        ),
        {},
        INT,
        None,
        "the idempotency key was reused with other data (the pack's bug)",
    ),
    (
        "rate_limited",
        429,
        _e("RATE_LIMIT_ERROR", "RATE_LIMITED", "Rate limit exceeded."),
        {},
        RL,
        None,
        "the application's rate limit",
    ),
    (
        "internal",
        500,
        _e("API_ERROR", "INTERNAL_SERVER_ERROR", "An internal error has occurred."),
        {},
        NET,
        None,
        "Square failed",
    ),
    (
        "unavailable",
        503,
        _e("API_ERROR", "SERVICE_UNAVAILABLE", "Service unavailable."),
        {},
        NET,
        None,
        "Square is unavailable",
    ),
]
http_cases(FAM, _pay, PAY)
http_cases(
    FAM,
    _customer,
    [
        (
            "customer_not_found",
            404,
            _e(
                "INVALID_REQUEST_ERROR",
                "NOT_FOUND",
                "Customer with ID `JDKYHBWT1D4F8MFH63DBMEN8Y4` not found.",
            ),
            {},
            NF,
            None,
            "the customer does not exist",
        )
    ],
    transport=False,
)
