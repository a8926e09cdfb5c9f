"""Adyen (Adyen's Python API library, requests underneath) against a fake Adyen Checkout API
answering its documented error bodies (``{"status", "errorCode", "message", "errorType",
"pspReference"}``) and statuses: 401 and 403 security errors, 400 and 422 validation errors,
an idempotent request still in progress, 404 on an unknown payment link, 429, 500 and a 503
from the gateway; plus the client's own timeout and the transport failures."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    RL,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("adyen", "fake Adyen Checkout API", http_setup, half="heldout15")


def _client() -> Any:
    import Adyen  # type: ignore[import-untyped]

    adyen = Adyen.Adyen(
        xapikey="AQEyhmfxPLANTEDadyenkey", platform="test", http_timeout=1, http_force="requests"
    )
    return adyen


def _pay(url: str) -> Any:
    adyen = _client()
    api = adyen.checkout.payments_api
    api.baseUrl = url + "/v72"
    return api.payments(
        {
            "amount": {"currency": "EUR", "value": 1000},
            "reference": "order-7731",
            "merchantAccount": "AcmeShopECOM",
            "paymentMethod": {"type": "scheme", "encryptedCardNumber": "test_4111111111111111"},
            "returnUrl": "https://shop.example/checkout/return",
        },
        idempotency_key="6f1d2c3b-order-7731",
    )


def _link(url: str) -> Any:
    adyen = _client()
    api = adyen.checkout.payment_links_api
    api.baseUrl = url + "/v72"
    return api.get_payment_link("PL61C53A8B97E6915A")


def _e(status: int, code: str, message: str, type: str) -> dict[str, Any]:
    return {
        "status": status,
        "errorCode": code,
        "message": message,
        "errorType": type,
        "pspReference": "SJF9W8KMHGNKGK82",
    }


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _e(401, "000", "HTTP Status Response - Unauthorized", "security"),
        {},
        AUTH,
        None,
        "the API key is not valid",
    ),
    (
        "merchant_not_allowed",
        403,
        _e(403, "901", "Invalid Merchant Account", "security"),
        {},
        AUTH,
        None,
        "the API key's credential has no access to this merchant account",
    ),
    (
        "role_missing",
        403,
        _e(403, "010", "Not allowed", "security"),
        {},
        AUTH,
        None,
        "the API credential lacks the role this endpoint needs",
    ),
    (
        "invalid_card",
        422,
        _e(422, "101", "Invalid card number", "validation"),
        {},
        INT,
        None,
        "the card number in the request is invalid (the caller's input)",
    ),
    (
        "missing_field",
        422,
        _e(422, "130", "Required field 'reference' is not provided.", "validation"),
        {},
        INT,
        None,
        "a required field is missing (the caller's input)",
    ),
    (
        "malformed_json",
        400,
        _e(400, "702", "Unexpected input: }", "validation"),
        {},
        INT,
        None,
        "the request body does not parse (the caller's input)",
    ),
    (
        "idempotent_in_progress",
        422,
        _e(422, "704", "Request already processed or in progress", "validation"),
        {},
        EXISTS | INT,
        None,
        "the same idempotency key was already used by a request being processed",
    ),
    (
        "rate_limited",
        429,
        _e(429, "000", "Too many requests", "validation"),
        {},
        RL,
        None,
        "too many requests for the merchant account, no delay given",
    ),
    (
        "internal",
        500,
        _e(500, "000", "An unknown error occurred", "internal"),
        {},
        NET,
        None,
        "Adyen failed",
    ),
    (
        "unavailable",
        503,
        "<html><head><title>503 Service Unavailable</title></head><body><h1>Service Unavailable</h1></body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the gateway answers a bare 503 page",
    ),
]
http_cases(FAM, _pay, ROWS)


def _missing_link(ctx: Http) -> Any:
    ctx.http.set(
        404,
        _e(404, "000", "Payment link with id PL61C53A8B97E6915A not found", "validation"),
    )
    return _link(ctx.http.url)


FAM.add("link_not_found", NF, "HTTP 404: the payment link does not exist", _missing_link)
