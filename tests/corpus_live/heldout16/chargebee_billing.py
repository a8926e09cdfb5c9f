"""chargebee (Chargebee's Python SDK v3, httpx underneath) against a fake Chargebee API v2
answering its documented error bodies (``{message, type, api_error_code, param, error_code,
error_msg, http_status_code}``; ``type`` picks the SDK's exception class) and statuses; a
load balancer's plain-text 503; plus the SDK's own timeout and the transport failures. The
SDK's retries stay off (its default)."""

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
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("chargebee", "fake Chargebee API v2", http_setup, half="heldout16")


def _client(url: str) -> Any:
    import chargebee  # type: ignore[import-untyped]
    from chargebee.main import Chargebee  # type: ignore[import-untyped]

    Chargebee.verify_ca_certs = False
    host = url.split("://", 1)[1]
    site, domain = host.split(".", 1)
    return chargebee.Chargebee(
        api_key="test_PLANTEDchargebeekey",
        site=site,
        chargebee_domain=domain,
        protocol="http",
        connection_time_out=1,
        read_time_out=1,
    )


def _create(url: str) -> Any:
    cb = _client(url)
    return cb.Customer.create(
        cb.Customer.CreateParams(id="cust_42", email="ada@acme.example", first_name="Ada")
    )


def _err(status: int, api_code: str, message: str, type_: str | None = None, **more: str) -> Any:
    body: dict[str, Any] = {"message": message}
    if type_ is not None:
        body["type"] = type_
    body["api_error_code"] = api_code
    body.update(more)
    body["error_code"] = more.get("error_code", api_code)
    body["error_msg"] = message
    body["http_status_code"] = status
    return body


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _err(401, "api_authentication_failed", "Sorry, authentication failed. Invalid api key"),
        {},
        AUTH,
        None,
        "the API key is not valid for this site",
    ),
    (
        "key_lacks_permission",
        403,
        _err(
            403,
            "api_authorization_failed",
            "Sorry, authorization failed. The key does not have the required permissions",
        ),
        {},
        AUTH,
        None,
        "a read-only key was used to create a customer",
    ),
    (
        "duplicate_id",
        400,
        _err(
            400,
            "duplicate_entry",
            "id : The value cust_42 is already present.",
            "invalid_request",
            param="id",
            error_code="param_not_unique",
        ),
        {},
        EXISTS,
        None,
        "a customer with this id already exists",
    ),
    (
        "bad_email",
        400,
        _err(
            400,
            "param_wrong_value",
            "email : invalid email format",
            "invalid_request",
            param="email",
            error_code="param_invalid_email",
        ),
        {},
        INT,
        None,
        "a parameter is malformed (the caller's input)",
    ),
    (
        "card_declined",
        402,
        _err(
            402,
            "payment_processing_failed",
            "Your card was declined.",
            "payment",
            error_code="card_declined",
        ),
        {},
        INT,
        None,
        "the customer's card was declined by the gateway",
    ),
    (
        "site_limit",
        400,
        _err(
            400,
            "resource_limit_exhausted",
            "Sorry, this operation is not allowed as your site has exceeded the number of "
            "customers allowed in the test site.",
            "operation_failed",
            error_code="test_site_limit_exceeded",
        ),
        {},
        QUOTA | INT,
        None,
        "the test site's customer limit is used up",
    ),
    (
        "rate_limited",
        429,
        _err(
            429,
            "api_request_limit_exceeded",
            "Sorry, access has been blocked temporarily due to request count exceeding "
            "acceptable limits. Please try after some time.",
        ),
        {"Retry-After": "3"},
        RL,
        3.0,
        "too many requests for the site, with the server's delay",
    ),
    (
        "internal",
        500,
        _err(
            500,
            "internal_error",
            "Sorry,Something went wrong when trying to process the request.",
        ),
        {},
        NET,
        None,
        "Chargebee failed",
    ),
    (
        "maintenance",
        503,
        "<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>",
        {},
        NET,
        None,
        "a plain-text overload page, not JSON",
    ),
    (
        "site_not_ready",
        503,
        _err(
            503,
            "site_not_ready",
            "Site is not ready to accept requests. Please try after some time.",
        ),
        {},
        NET,
        None,
        "the site is temporarily unable to take requests",
    ),
]


def _rows_call(url: str) -> Any:
    return _create(url)


http_cases(FAM, _rows_call, ROWS)


def _not_found(ctx: Http) -> Any:
    ctx.http.set(
        404,
        _err(
            404,
            "resource_not_found",
            "Sorry, we couldn't find that resource",
            "invalid_request",
            error_code="referenced_resource_not_found",
        ),
    )
    cb = _client(ctx.http.url)
    return cb.Customer.retrieve("cust_missing_7")


FAM.add("customer_not_found", NF, "HTTP 404: the customer does not exist", _not_found)


def _cancelled(ctx: Http) -> Any:
    ctx.http.set(
        409,
        _err(
            409,
            "invalid_state_for_request",
            "Subscription is in cancelled state. Only active, in_trial and future "
            "subscriptions can be paused.",
            "invalid_request",
            error_code="invalid_state_for_request",
        ),
    )
    cb = _client(ctx.http.url)
    return cb.Subscription.pause("sub_1mbDX8SJTEjL6w", cb.Subscription.PauseParams())


FAM.add(
    "paused_cancelled",
    INT,
    "HTTP 409: a cancelled subscription cannot be paused (the caller's request)",
    _cancelled,
)
