"""The Stripe SDK against a fake Stripe API answering its documented error objects."""

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
)

FAM = family("stripe", "fake Stripe API (error objects)", http_setup, half="visible")


def _call(url: str) -> Any:
    import stripe

    client = stripe.StripeClient(
        "sk_test_PLANTED",
        base_addresses={"api": url},
        max_network_retries=0,
        http_client=stripe.RequestsClient(timeout=1),
    )
    return client.v1.customers.retrieve("cus_123")


def _e(type_: str, message: str, code: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "error": {"type": type_, "message": message, **({"code": code} if code else {}), **extra}
    }


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _e("invalid_request_error", "Invalid API Key provided: sk_test_****"),
        {},
        AUTH,
        None,
        "invalid API key",
    ),
    (
        "expired_key",
        401,
        _e("invalid_request_error", "Expired API Key provided", "api_key_expired"),
        {},
        AUTH,
        None,
        "expired key",
    ),
    (
        "restricted",
        403,
        _e(
            "invalid_request_error",
            "The provided key does not have the required permissions for this endpoint",
            "secret_key_required",
        ),
        {},
        AUTH,
        None,
        "restricted key lacks permission",
    ),
    (
        "no_customer",
        404,
        _e("invalid_request_error", "No such customer: 'cus_123'", "resource_missing", param="id"),
        {},
        NF,
        None,
        "resource_missing",
    ),
    (
        "rate",
        429,
        _e("invalid_request_error", "Request rate limit exceeded.", "rate_limit"),
        {"Retry-After": "2"},
        RL,
        2.0,
        "rate limit with Retry-After",
    ),
    (
        "lock_timeout",
        429,
        _e(
            "invalid_request_error",
            "This object cannot be accessed right now because another API request or Stripe process is currently accessing it.",
            "lock_timeout",
        ),
        {},
        RL | TO,
        None,
        "object locked by another request",
    ),
    (
        "card_declined",
        402,
        _e(
            "card_error", "Your card was declined.", "card_declined", decline_code="generic_decline"
        ),
        {},
        INT,
        None,
        "card declined: a business outcome, not the pack's account quota",
    ),
    (
        "insufficient_funds",
        402,
        _e(
            "card_error",
            "Your card has insufficient funds.",
            "card_declined",
            decline_code="insufficient_funds",
        ),
        {},
        INT,
        None,
        "the customer's card, not the pack's account",
    ),
    (
        "idempotency",
        400,
        _e(
            "idempotency_error",
            "Keys for idempotent requests can only be used with the same parameters they were first used with.",
        ),
        {},
        INT,
        None,
        "idempotency key reused",
    ),
    (
        "param_invalid",
        400,
        _e(
            "invalid_request_error",
            "Invalid integer: abc",
            "parameter_invalid_integer",
            param="amount",
        ),
        {},
        INT,
        None,
        "bad parameter: the pack's bug",
    ),
    (
        "already",
        400,
        _e(
            "invalid_request_error",
            "A customer with this email already exists",
            "resource_already_exists",
        ),
        {},
        EXISTS | INT,
        None,
        "resource_already_exists code",
    ),
    (
        "api_error",
        500,
        _e("api_error", "An unknown error occurred"),
        {},
        NET,
        None,
        "Stripe's side",
    ),
    ("unavailable", 503, _e("api_error", "Service unavailable"), {}, NET, None, "unavailable"),
    (
        "account_deactivated",
        401,
        _e("invalid_request_error", "This account has been deactivated", "account_invalid"),
        {},
        AUTH | QUOTA,
        None,
        "the account cannot be used",
    ),
]
http_cases(FAM, _call, ROWS)
