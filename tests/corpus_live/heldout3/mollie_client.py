"""mollie-api-python (Mollie's payments client) against a fake Mollie API v2 answering its
documented RFC 7807 error bodies (``application/hal+json``: ``{"status": 404, "title":
"Not Found", "detail": ..., "field": ..., "_links": {...}}``)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("mollie", "fake Mollie API v2", http_setup, half="heldout3")


def _client(url: str) -> Any:
    from mollie.api.client import Client

    client = Client(api_endpoint=url, timeout=(1, 1), retry=0)
    client.set_api_key("test_PLANTEDmollieapikey00000000000")
    return client


def _get(url: str) -> Any:
    return _client(url).payments.get("tr_WDqYK6vllg")


def _create(url: str) -> Any:
    return _client(url).payments.create(
        {
            "amount": {"currency": "EUR", "value": "10.00"},
            "description": "Order #12345",
            "redirectUrl": "https://shop.example.org/order/12345/",
        }
    )


def _p(status: int, title: str, detail: str, field: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"status": status, "title": title, "detail": detail}
    if field:
        body["field"] = field
    body["_links"] = {
        "documentation": {
            "href": "https://docs.mollie.com/overview/handling-errors",
            "type": "text/html",
        }
    }
    return body


GET: list[Row] = [
    (
        "payment_not_found",
        404,
        _p(404, "Not Found", "No payment exists with token tr_WDqYK6vllg."),
        {},
        NF,
        None,
        "the payment id does not exist",
    ),
    (
        "unauthorized",
        401,
        _p(401, "Unauthorized Request", "Missing authentication, or failed to authenticate"),
        {},
        AUTH,
        None,
        "the API key is invalid",
    ),
    (
        "forbidden",
        403,
        _p(403, "Forbidden", "The API key has insufficient permissions for this resource."),
        {},
        AUTH,
        None,
        "the key may not read payments",
    ),
    (
        "gone",
        410,
        _p(410, "Gone", "The payment is no longer available."),
        {},
        NF,
        None,
        "the payment was removed",
    ),
    (
        "rate_limited",
        429,
        _p(429, "Too Many Requests", "You have exceeded the rate limit. Please try again later."),
        {},
        RL,
        None,
        "the API's rate limit",
    ),
    (
        "unavailable",
        503,
        _p(503, "Service Unavailable", "The service is temporarily unavailable."),
        {},
        NET,
        None,
        "Mollie is unavailable",
    ),
]
http_cases(FAM, _get, GET, content_type="application/hal+json")
http_cases(
    FAM,
    _create,
    [
        (
            "amount_too_high",
            422,
            _p(422, "Unprocessable Entity", "The amount is higher than the maximum", "amount"),
            {},
            INT,
            None,
            "the amount is over the method's maximum (the pack's input)",
        ),
        (
            "bad_request",
            400,
            _p(400, "Bad Request", "The 'redirectUrl' field must be a valid URL", "redirectUrl"),
            {},
            INT,
            None,
            "a malformed field",
        ),
    ],
    content_type="application/hal+json",
    transport=False,
)
