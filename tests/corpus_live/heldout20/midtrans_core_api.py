"""midtransclient (Midtrans' payment gateway, a requests client): its ``CoreApi`` charges a
bank-transfer order against a fake Midtrans Core API on 127.0.0.1. Midtrans answers most
failures of a charge with HTTP 200 and its own ``status_code`` in the JSON body
(``{"status_code": "406", "status_message": ..., "id": ...}``), which the client turns
into a ``MidtransAPIError``; a few come as real HTTP statuses from its edge. Provoked: an
unauthorized server key, a payment type the merchant may not use, an unknown resource, a
reused order id, a deactivated merchant, validation and syntax errors, rate limits, the
bank's and the fraud engine's outages, a proxy's page; plus the transport failures and a
peer answering garbage. The client sets no timeout of its own, so no silent-server case."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    RL,
    TO,
    UNRESOLVABLE,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("midtransclient", "fake Midtrans Core API", http_setup, half="heldout20")


def _charge(url: str) -> Any:
    import midtransclient

    core = midtransclient.CoreApi(
        is_production=False,
        server_key="SB-Mid-server-PLANTEDq7Xk2mW9",
        client_key="SB-Mid-client-PLANTEDh3v5b8n1",
    )
    # The sandbox base URL is a class constant; point this instance at the fake.
    core.api_config.CORE_SANDBOX_BASE_URL = url
    return core.charge(
        {
            "payment_type": "bank_transfer",
            "transaction_details": {"order_id": "order-A-99812", "gross_amount": 145000},
            "bank_transfer": {"bank": "bca"},
        }
    )


def _s(code: str, message: str, **more: Any) -> dict[str, Any]:
    return {"status_code": code, "status_message": message, "id": "b7c5f1a2-PLANTED", **more}


ROWS: list[Row] = [
    (
        "unauthorized",
        200,
        _s(
            "401",
            "Access denied due to unauthorized transaction, please check client or server key",
        ),
        {},
        AUTH,
        None,
        "status_code 401 in the body: the server key is wrong or of another environment",
    ),
    (
        "unknown_key_http",
        401,
        _s(
            "401",
            "Unknown Merchant server_key/id",
        ),
        {},
        AUTH,
        None,
        "the edge knows no merchant with this server key",
    ),
    (
        "payment_type_denied",
        200,
        _s("402", "Merchant doesn't have access for this payment type"),
        {},
        AUTH,
        None,
        "status_code 402 in the body: bank transfer is not activated for this merchant",
    ),
    (
        "resource_missing",
        200,
        _s("404", "The requested resource is not found"),
        {},
        NF,
        None,
        "status_code 404 in the body: the referenced transaction or resource does not exist",
    ),
    (
        "duplicate_order",
        200,
        _s("406", "Duplicate order ID. order_id has already been utilized previously."),
        {},
        EXISTS,
        None,
        "status_code 406 in the body: this order id was already used for a transaction",
    ),
    (
        "merchant_deactivated",
        200,
        _s("410", "Merchant account is deactivated. Please contact Midtrans support."),
        {},
        AUTH,
        None,
        "status_code 410 in the body: the merchant account is deactivated",
    ),
    (
        "validation_error",
        200,
        _s(
            "400",
            "One or more parameters in the payload is invalid.",
            validation_messages=["transaction_details.gross_amount must be an integer"],
        ),
        {},
        INT,
        None,
        "status_code 400 in the body: a field of the charge is invalid (the caller's input)",
    ),
    (
        "syntax_error",
        200,
        _s("413", "The request cannot be processed due to syntax error in the request body"),
        {},
        INT,
        None,
        "status_code 413 in the body: the request body is malformed (the caller's input)",
    ),
    (
        "internal",
        200,
        _s("500", "Sorry. Our system is recovering from unexpected issues. Please retry."),
        {},
        NET,
        None,
        "status_code 500 in the body: Midtrans failed and asks for a retry",
    ),
    (
        "bank_down",
        200,
        _s("503", "Bank/partner is experiencing connection issue."),
        {},
        NET,
        None,
        "status_code 503 in the body: the acquiring bank cannot be reached",
    ),
    (
        "fraud_engine_timeout",
        200,
        _s("504", "Fraud detection is unavailable, please try again later."),
        {},
        NET | TO,
        None,
        "status_code 504 in the body: the fraud-detection service did not answer in time",
    ),
    (
        "rate_limited",
        429,
        _s("429", "Too Many Requests. Please retry later."),
        {"Retry-After": "3"},
        RL,
        3.0,
        "the merchant's request rate is over the limit; Retry-After says when",
    ),
    (
        "bad_gateway",
        502,
        _s("502", "Internal server error: bank connection problem"),
        {},
        NET,
        None,
        "the gateway could not reach the bank's host",
    ),
]
http_cases(FAM, _charge, ROWS, transport=False)

FAM.add("refused", NET, "nothing listens", lambda c: _charge(f"http://{LOOPBACK}:{c.net.closed}"))
FAM.add("dns", NET, "host does not resolve", lambda c: _charge(f"http://{UNRESOLVABLE}:80"))
FAM.add("dropped", NET, "closed at once", lambda c: _charge(f"http://{LOOPBACK}:{c.net.close_now}"))


@FAM.case("garbage", NET, "the peer answers bytes of no protocol instead of HTTP")
def _garbage(c: Http) -> Any:
    return _charge(f"http://{LOOPBACK}:{c.net.garbage}")
