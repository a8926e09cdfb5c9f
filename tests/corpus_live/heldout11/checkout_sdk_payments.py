"""checkout-sdk (Checkout.com's Python SDK over requests) against a fake Checkout.com API on
127.0.0.1 (a custom ``Environment`` whose URIs point at the fake, the shared hosts via
``use_legacy_domain``, and a ``requests.Session`` given a 1 s timeout through the SDK's
``http_client_builder``: the SDK sets none). Checkout.com answers 401, 403, 404 and 429 with an
empty body and a ``Cko-Request-Id`` header, and validation failures with 422
``{"request_id", "error_type": "request_invalid", "error_codes": [...]}``; the SDK raises
``CheckoutApiException`` (status in ``http_metadata``), ``CheckoutException`` for an
``OSError`` of the transport, and ``CheckoutArgumentException`` for a malformed key. Faked: the
API; real: the SDK and requests."""

from __future__ import annotations

import warnings
from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Http, Row, family, http_cases, http_setup

FAM = family("checkout-sdk", "fake Checkout.com API", http_setup, half="heldout11")

_SECRET = "sk_sbox_m73dzbpy7cf3gfd46xr4yj5xo4e"
_PAYMENT = "pay_mbabizu24mvu3mela5njyhpit4"
_REQ = {"Cko-Request-Id": "0HMVG2K8J1P4L:00000003"}


class _Builder:
    """The SDK's ``HttpClientBuilderInterface``: a session whose requests time out."""

    def get_client(self) -> Any:
        import requests

        class Session(requests.Session):
            def request(self, *args: Any, **kw: Any) -> Any:
                kw.setdefault("timeout", 1)
                return super().request(*args, **kw)

        return Session()


def _sdk(url: str, secret: str = _SECRET) -> Any:
    from checkout_sdk.checkout_sdk import CheckoutSdk  # type: ignore[import-untyped]
    from checkout_sdk.environment import Environment  # type: ignore[import-untyped]

    base = url + "/"
    env = Environment(base, base + "connect/token", base, base, base, base, base, True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return (
            CheckoutSdk.builder()
            .secret_key(secret)
            .environment(env)
            .use_legacy_domain()
            .http_client_builder(_Builder())
            .build()
        )


def _details(url: str) -> Any:
    return _sdk(url).payments.get_payment_details(_PAYMENT)


def _pay(url: str) -> Any:
    from checkout_sdk.common.enums import Currency  # type: ignore[import-untyped]
    from checkout_sdk.payments.payments import PaymentRequest  # type: ignore[import-untyped]

    request = PaymentRequest()
    request.amount = 0
    request.currency = Currency.EUR
    request.reference = "ORD-5023-4E89"
    return _sdk(url).payments.request_payment(request, idempotency_key="ord-5023-4e89-1")


def _refund(url: str) -> Any:
    from checkout_sdk.payments.payments import RefundRequest

    request = RefundRequest()
    request.amount = 250000
    request.reference = "RFD-5023-4E89"
    return _sdk(url).payments.refund_payment(_PAYMENT, request)


def _invalid(*codes: str) -> dict[str, Any]:
    return {
        "request_id": "0HMVG2K8J1P4L:00000003",
        "error_type": "request_invalid",
        "error_codes": list(codes),
    }


DETAILS: list[Row] = [
    ("bad_key", 401, b"", _REQ, AUTH, None, "the secret key is wrong or revoked"),
    (
        "missing_scope",
        403,
        b"",
        _REQ,
        AUTH,
        None,
        "the key lacks the scope for payment details",
    ),
    ("payment_not_found", 404, b"", _REQ, NF, None, "no payment with that id"),
    ("too_many", 429, b"", _REQ, RL, None, "too many requests: Checkout.com sends no delay"),
    ("server_error", 500, b"", _REQ, NET, None, "Checkout.com failed"),
    ("bad_gateway", 502, b"", _REQ, NET, None, "an upstream processor did not answer"),
]
http_cases(FAM, _details, DETAILS)

PAY: list[Row] = [
    (
        "amount_and_source",
        422,
        _invalid("amount_invalid", "payment_source_required"),
        _REQ,
        INT,
        None,
        "the caller's payment has a zero amount and no source",
    ),
]
http_cases(FAM, _pay, PAY, transport=False)

REFUND: list[Row] = [
    (
        "refund_over_balance",
        422,
        _invalid("refund_amount_exceeds_balance"),
        _REQ,
        INT,
        None,
        "the caller asks to refund more than was captured",
    ),
    (
        "refund_not_allowed",
        403,
        b"",
        _REQ,
        INT,
        None,
        "the payment is not in a state that can be refunded",
    ),
]
http_cases(FAM, _refund, REFUND, transport=False)


@FAM.case("malformed_key", AUTH | INT, "the secret key has the wrong format: the SDK refuses it")
def _malformed_key(ctx: Http) -> Any:
    return _sdk(ctx.http.url, secret="sk_test_0123456789abcdef").payments.get_payment_details(
        _PAYMENT
    )
