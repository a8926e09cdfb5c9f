"""paddle-python-sdk (Paddle Billing's Python SDK, requests underneath) against a fake
Paddle Billing API on 127.0.0.1 answering Paddle's error envelope (``{"error": {"type",
"code", "detail", "documentation_url", "errors"?}, "meta": {"request_id"}}``) with its
statuses and headers: a missing, malformed or invalid API key, a key without the
permission, a customer email already taken, field errors, an unknown customer, the
per-IP rate limit (``Retry-After``), server errors and the Cloudflare edge's page; plus
the SDK's own timeout and the transport failures. The SDK only retries over https, so
these plain-http calls are tried once."""

from __future__ import annotations

from typing import Any, cast

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

FAM = family("paddle-python-sdk", "fake Paddle Billing API", http_setup, half="heldout18")

_DOCS = "https://developer.paddle.com/errors"


class _Local:
    """Where the SDK sends its requests (Paddle's own environments name their base URL)."""

    def __init__(self, url: str) -> None:
        self.base_url = url


def _client(url: str) -> Any:
    from paddle_billing import Client, Options  # type: ignore[import-untyped]

    return Client(
        "pdl_live_apikey_01jd2f4a8c9e7b3d5f6a1c2e4g_PLANTEDkeyMaterial0123456789_abc",
        options=Options(environment=cast(Any, _Local(url))),
        timeout=1,
    )


def _create(url: str) -> Any:
    from paddle_billing.Resources.Customers.Operations import (  # type: ignore[import-untyped]
        CreateCustomer,
    )

    return _client(url).customers.create(
        CreateCustomer(email="jo.bloggs@example.com", name="Jo Bloggs")
    )


def _get(url: str) -> Any:
    return _client(url).customers.get("ctm_01jd2hz8k4m6n8p0q2r4s6t8v0")


def _e(code: str, detail: str, area: str = "shared", **extra: Any) -> dict[str, Any]:
    return {
        "error": {
            "type": "request_error",
            "code": code,
            "detail": detail,
            "documentation_url": f"{_DOCS}/{area}/{code}",
            **extra,
        },
        "meta": {"request_id": "6c4f2a1e-8b3d-4e5f-9a0b-1c2d3e4f5a6b"},
    }


def _api(code: str, detail: str) -> dict[str, Any]:
    body = _e(code, detail)
    body["error"]["type"] = "api_error"
    return body


ROWS: list[Row] = [
    (
        "authentication_missing",
        401,
        _e(
            "authentication_missing",
            "Authentication header missing",
        ),
        {},
        AUTH,
        None,
        "the request carried no API key",
    ),
    (
        "authentication_malformed",
        401,
        _e(
            "authentication_malformed",
            "Authentication header included, but incorrectly formatted",
        ),
        {},
        AUTH,
        None,
        "the Authorization header is malformed",
    ),
    (
        "invalid_token",
        403,
        _e(
            "invalid_token",
            "Authentication token does not appear to be valid. Check that you're using the "
            "correct key for the environment.",
        ),
        {},
        AUTH,
        None,
        "the key is revoked or belongs to the other environment",
    ),
    (
        "forbidden",
        403,
        _e(
            "forbidden",
            "You aren't permitted to perform this request. The API key is missing the "
            "customer.write permission.",
        ),
        {},
        AUTH,
        None,
        "the API key lacks the write permission",
    ),
    (
        "customer_already_exists",
        409,
        _e(
            "customer_already_exists",
            "customer email conflicts with customer of id ctm_01h8441jn5pcwrfhwh78jqt8hk",
            "customers",
        ),
        {},
        EXISTS,
        None,
        "a customer with that email already exists",
    ),
    (
        "invalid_field",
        400,
        _e(
            "invalid_field",
            "Invalid request.",
            errors=[{"field": "email", "message": "does not match format 'email'"}],
        ),
        {},
        INT,
        None,
        "a field failed validation (the caller's input)",
    ),
    (
        "body_too_large",
        413,
        _e("request_body_too_large", "Request body exceeded the maximum size of 1MB"),
        {},
        INT,
        None,
        "the request body is too large (the caller's input)",
    ),
    (
        "too_many_requests",
        429,
        _e(
            "too_many_requests",
            "IP address exceeded the allowed rate limit. Retry after the number of seconds "
            "in the Retry-After header.",
        ),
        {"Retry-After": "16"},
        RL,
        16.0,
        "the per-IP request limit was hit",
    ),
    (
        "internal_error",
        500,
        _api("internal_error", "An internal error occurred."),
        {},
        NET,
        None,
        "Paddle failed",
    ),
    (
        "service_unavailable",
        503,
        _api("service_unavailable", "The service is temporarily unavailable."),
        {},
        NET | RL,
        None,
        "Paddle is down for a moment, no delay given",
    ),
    (
        "cloudflare_502",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n"
        "</body>\r\n</html>\r\n",
        {"Content-Type": "text/html", "Server": "cloudflare", "CF-RAY": "8e1f2a3b4c5d6e7f-AMS"},
        NET,
        None,
        "the Cloudflare edge reached no origin (an HTML page)",
    ),
]
http_cases(FAM, _create, ROWS)


def _not_found(ctx: Any) -> Any:
    ctx.http.set(
        404,
        _e("not_found", "Entity ctm_01jd2hz8k4m6n8p0q2r4s6t8v0 not found"),
    )
    return _get(ctx.http.url)


FAM.add("not_found", NF, "HTTP 404: the customer id does not exist", _not_found)
