"""polar-sdk (Polar, a merchant-of-record billing platform; its sync client is generated from
Polar's OpenAPI schema into dataclasses and typed errors on httpx): ``subscriptions.update``
moves a subscription to another product against a fake Polar API on 127.0.0.1 answering the
errors Polar documents for that endpoint (``{"error", "detail"}`` bodies, ``error`` Polar's
error class: ``ResourceNotFound``, ``PaymentFailed``, ``AlreadyCanceledSubscription``,
``SubscriptionLocked``, ``PolarRequestValidationError``) with their statuses: a wrong or
expired token, a token without the ``subscriptions:write`` scope (an OAuth-style 403 body the
generated models do not know), an unknown subscription, a declined card, a subscription
already canceled, one locked by a pending update, the caller's invalid product id, rate limits
with ``Retry-After``, a server error and a gateway page; plus the client's own timeout and the
transport failures. The client has no retries of its own."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("polar-sdk", "fake Polar API", http_setup, half="heldout21")

_SUB = "7f3c2a1e-5b9d-4c8e-a6f0-1d2e3f4a5b6c"


def _update(url: str) -> Any:
    from polar.v2027_01.client import Polar

    with Polar("polar_oat_PLANTEDv8Q2nX4rT6yW1zK3", base_url=url, timeout=1.0) as client:
        return client.subscriptions.update(_SUB, product_id="0b9e8d7c-6a5f-4e3d-9c2b-1a0f9e8d7c6b")


def _e(error: str, detail: str) -> dict[str, Any]:
    return {"error": error, "detail": detail}


ROWS: list[Row] = [
    (
        "unauthorized",
        401,
        _e("Unauthorized", "Unauthorized"),
        {"WWW-Authenticate": 'Bearer realm="polar", error="invalid_token"'},
        AUTH,
        None,
        "the organization access token is unknown, expired or revoked",
    ),
    (
        "insufficient_scope",
        403,
        {
            "error": "insufficient_scope",
            "error_description": "The token doesn't have the required scope.",
            "required_scope": "subscriptions:write",
        },
        {"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="subscriptions:write"'},
        AUTH | frozenset({"schema_mismatch"}),
        None,
        "insufficient_scope: the token lacks subscriptions:write (the SDK cannot parse the body)",
    ),
    (
        "not_found",
        404,
        _e("ResourceNotFound", "Not found"),
        {},
        NF,
        None,
        "ResourceNotFound: no subscription has this id in the organization",
    ),
    (
        "payment_failed",
        402,
        _e("PaymentFailed", "Payment failed: Your card was declined."),
        {},
        INT,
        None,
        "PaymentFailed: the proration charge was declined off-session",
    ),
    (
        "already_canceled",
        403,
        _e(
            "AlreadyCanceledSubscription",
            "This subscription is already canceled or will be at the end of the period.",
        ),
        {},
        INT,
        None,
        "AlreadyCanceledSubscription: a canceled subscription cannot change product",
    ),
    (
        "locked",
        409,
        _e("SubscriptionLocked", "This subscription is pending an update."),
        {},
        INT | NET,
        None,
        "SubscriptionLocked: a previous update is still being processed",
    ),
    (
        "invalid_product",
        422,
        {
            "error": "PolarRequestValidationError",
            "detail": [
                {
                    "loc": ["body", "product_id"],
                    "msg": "Input should be a valid UUID, invalid length: expected length 32 "
                    "for simple format, found 11",
                    "type": "uuid_parsing",
                    "input": "pro-monthly",
                }
            ],
        },
        {},
        INT,
        None,
        "PolarRequestValidationError: product_id is not a UUID (the caller's input)",
    ),
    (
        "rate_limited",
        429,
        _e("TooManyRequests", "Rate limit exceeded"),
        {"Retry-After": "15"},
        RL,
        15.0,
        "the organization's request rate is over Polar's limit; Retry-After says when",
    ),
    (
        "internal",
        500,
        _e("InternalServerError", "Internal Server Error"),
        {},
        NET,
        None,
        "Polar failed",
    ),
    (
        "bad_gateway",
        502,
        "<!DOCTYPE html><html><head><title>api.polar.sh | 502: Bad gateway</title></head>"
        "<body><h1>Bad gateway</h1><p>Error code 502</p><p>The web server reported a bad "
        "gateway error.</p><p>Cloudflare Ray ID: 8f2c1a9b7e6d5c4b</p></body></html>",
        {"Content-Type": "text/html; charset=UTF-8"},
        NET,
        None,
        "Cloudflare reached no healthy origin (an HTML page)",
    ),
]
http_cases(FAM, _update, ROWS)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol instead of HTTP",
    lambda c: _update(f"http://{LOOPBACK}:{c.net.garbage}"),
)
