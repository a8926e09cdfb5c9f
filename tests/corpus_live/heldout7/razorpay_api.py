"""razorpay (Razorpay's official Python client, over requests) against a fake Razorpay API on
127.0.0.1 (``base_url=``; the client's retries stay off, as by default): errors are
Razorpay's documented ``{"error": {"code", "description", "source", "step", "reason",
"metadata", "field"}}`` bodies. Razorpay sends nearly every client error as
``BAD_REQUEST_ERROR`` (an unknown id on HTTP 400, a bad key on 401, a throttled account on
429 with no delay), ``GATEWAY_ERROR`` when a bank or network failed and ``SERVER_ERROR``
when Razorpay did. The client reads only ``error.code`` and ``error.description``: it raises
``razorpay.errors.BadRequestError``, ``GatewayError`` or ``ServerError`` with the
description alone (no status), lets ``json.JSONDecodeError`` out of a proxy's HTML page, and
requests' exceptions out of the transport."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("razorpay", "fake Razorpay API", http_setup, half="heldout7")

_AUTH = ("rzp_test_PLANTED1aB2cD3eF4", "PLANTEDsecret9ZyXwVuTsRqPo")


def _client(url: str) -> Any:
    import razorpay

    return razorpay.Client(auth=_AUTH, base_url=url)


def _capture(url: str) -> Any:
    return _client(url).payment.capture("pay_29QQoUBi66xm2f", 50000, {"currency": "INR"}, timeout=1)


def _err(
    description: str,
    code: str = "BAD_REQUEST_ERROR",
    *,
    source: str = "NA",
    step: str = "NA",
    reason: str = "NA",
    field: str | None = None,
) -> dict[str, Any]:
    err: dict[str, Any] = {
        "code": code,
        "description": description,
        "source": source,
        "step": step,
        "reason": reason,
        "metadata": {},
    }
    if field is not None:
        err["field"] = field
    return {"error": err}


_NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    "</body>\r\n</html>\r\n"
)

ROWS: list[Row] = [
    (
        "auth_failed",
        401,
        _err("Authentication failed"),
        {},
        AUTH,
        None,
        "the key id and secret do not match",
    ),
    (
        "invalid_key",
        401,
        _err("The api key provided is invalid"),
        {},
        AUTH,
        None,
        "the key id is unknown (a test key on live, or revoked)",
    ),
    (
        "no_payment",
        400,
        _err(
            "The id provided does not exist",
            source="business",
            step="payment_initiation",
            reason="input_validation_failed",
            field="id",
        ),
        {},
        NF,
        None,
        "no payment with that id (Razorpay answers 400)",
    ),
    (
        "already_captured",
        400,
        _err(
            "This payment has already been captured",
            source="business",
            step="payment_authorization",
            reason="payment_already_captured",
        ),
        {},
        EXISTS | INT,
        None,
        "the payment was captured before",
    ),
    (
        "amount_mismatch",
        400,
        _err(
            "Capture amount must be equal to the amount authorized",
            source="business",
            step="payment_authorization",
            reason="input_validation_failed",
            field="amount",
        ),
        {},
        INT,
        None,
        "the capture amount differs from the authorized one (the pack's input)",
    ),
    (
        "throttled",
        429,
        _err("Too many requests"),
        {},
        RL,
        None,
        "the account's request rate (Razorpay sends no delay)",
    ),
    (
        "gateway_error",
        502,
        _err(
            "Payment processing failed due to error at bank or wallet gateway",
            "GATEWAY_ERROR",
            source="bank",
            step="payment_authorization",
            reason="gateway_technical_error",
        ),
        {},
        NET,
        None,
        "the bank's gateway failed",
    ),
    (
        "server_error",
        500,
        _err(
            "The server encountered an error. The incident has been reported to admins.",
            "SERVER_ERROR",
        ),
        {},
        NET,
        None,
        "Razorpay failed",
    ),
]
http_cases(FAM, _capture, ROWS)
http_cases(
    FAM,
    _capture,
    [("proxy_502", 502, _NGINX_502, {"Server": "nginx"}, NET, None, "a proxy's HTML page")],
    content_type="text/html",
    transport=False,
)


FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: _capture(f"http://127.0.0.1:{c.net.garbage}"),
)
