"""lago-python-client (Lago, open-source usage-based billing; its sync client on httpx):
``client.subscriptions.create`` subscribes a customer to a plan against a fake Lago API on 127.0.0.1 answering the
errors Lago documents (``{"status", "error", "code", "error_details"}`` bodies) with their
statuses and Lago's rate-limit headers: a wrong API key, a premium feature the plan lacks,
an unknown plan, a subscription id already taken (a 422 ``validation_errors`` with
``value_already_exist``), a currency clash, the caller's missing and ill-typed input, a plan
change Lago refuses, the rate limit (its delay only in ``x-ratelimit-reset``, the seconds
left in the window, no ``Retry-After``), a server error and a gateway page; plus the client's
own timeout and the transport failures. The client's retries are off (``max_retries=0``,
``retry_on_rate_limit=False``)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("lago-python-client", "fake Lago API", http_setup, half="heldout21")


def _send(url: str) -> Any:
    import httpx
    from lago_python_client.client import Client
    from lago_python_client.models import Subscription

    client = Client(
        api_key="PLANTED-5b1f0e2a-9c7d-4e3b-a8f6-2d4c6e8a0b1c",
        api_url=url,
        max_retries=0,
        retry_on_rate_limit=False,
    )
    sub = Subscription(
        external_customer_id="cus_acme_0042",
        plan_code="pro_monthly",
        external_id="sub_acme_pro_monthly",
        billing_time="anniversary",
    )
    return client.subscriptions.create(sub, timeout=httpx.Timeout(1.0))


def _e(status: int, error: str, code: str | None = None, details: Any = None) -> Any:
    body: dict[str, Any] = {"status": status, "error": error}
    if code is not None:
        body["code"] = code
    if details is not None:
        body["error_details"] = details
    return body


ROWS: list[Row] = [
    (
        "unauthorized",
        401,
        _e(401, "Unauthorized"),
        {},
        AUTH,
        None,
        "the API key is unknown or was rotated",
    ),
    (
        "feature_unavailable",
        403,
        _e(403, "Forbidden", "feature_unavailable"),
        {},
        AUTH | QUOTA,
        None,
        "feature_unavailable: a premium feature the organization's plan does not include",
    ),
    (
        "plan_missing",
        404,
        _e(404, "Not Found", "plan_not_found"),
        {},
        NF,
        None,
        "plan_not_found: no plan has this code",
    ),
    (
        "already_exists",
        422,
        _e(
            422,
            "Unprocessable Entity",
            "validation_errors",
            {"external_id": ["value_already_exist"]},
        ),
        {},
        EXISTS,
        None,
        "validation_errors/value_already_exist: a subscription has this external id",
    ),
    (
        "currency_clash",
        422,
        _e(
            422,
            "Unprocessable Entity",
            "validation_errors",
            {"currency": ["currencies_does_not_match"]},
        ),
        {},
        INT,
        None,
        "validation_errors: the plan's currency differs from the customer's",
    ),
    (
        "bad_request",
        400,
        _e(400, "BadRequest: param is missing or the value is empty: subscription"),
        {},
        INT,
        None,
        "the body lacks the subscription (the caller's input)",
    ),
    (
        "bad_property",
        422,
        _e(
            422,
            "Unprocessable Entity",
            "validation_errors",
            {"subscription_at": ["invalid_date"]},
        ),
        {},
        INT,
        None,
        "validation_errors: subscription_at is not a date (the caller's input)",
    ),
    (
        "not_allowed",
        405,
        _e(
            405,
            "Method Not Allowed",
            "not_allowed",
            {"plan": "downgrade_not_allowed_with_pending_invoices"},
        ),
        {},
        INT,
        None,
        "not_allowed: Lago refuses this plan change for the subscription's state",
    ),
    (
        "rate_limited",
        429,
        _e(429, "Too Many Requests"),
        {"x-ratelimit-limit": "100", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "7"},
        RL,
        7.0,
        "the organization's request window is spent; x-ratelimit-reset gives the seconds left",
    ),
    (
        "internal",
        500,
        _e(500, "Internal Server Error"),
        {},
        NET,
        None,
        "Lago failed",
    ),
    (
        "gateway_timeout",
        504,
        "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n"
        "</body></html>\n",
        {"Content-Type": "text/html"},
        frozenset({"timeout", "network_error"}),
        None,
        "the load balancer gave up waiting for Lago (an HTML page)",
    ),
]
http_cases(FAM, _send, ROWS)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol instead of HTTP",
    lambda c: _send(f"http://{LOOPBACK}:{c.net.garbage}"),
)
