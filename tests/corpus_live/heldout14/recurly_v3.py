"""recurly (Recurly's Python client for API v3, ``recurly.Client``: its code generated from
Recurly's OpenAPI spec, over the standard library's ``http.client``) against a fake Recurly
v3 API on 127.0.0.1. The client always opens an ``HTTPSConnection`` to ``v3.recurly.com``:
the case swaps that one connection for a plain ``HTTPConnection`` to the fake (a 1 s
timeout); everything else is the library's own. Recurly answers errors as
``{"error": {"type", "message", "params"?, "transaction_error"?}}`` with ``X-Request-Id``;
the client raises the class named after ``error.type`` (``NotFoundError``,
``ValidationError``, ``RateLimitedError``...), a class per status when the body is not JSON,
and ``NetworkError`` for socket errors. Rate limits carry ``X-RateLimit-Limit``,
``X-RateLimit-Remaining`` and ``X-RateLimit-Reset`` (the window's end, UTC epoch seconds).
Faked: the API (shapes from Recurly's v3 API reference, "Errors"); real: the client."""

from __future__ import annotations

import http.client
import time
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    RL,
    TO,
    Http,
    Reply,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("recurly", "fake Recurly API v3", http_setup, half="heldout14")

_H = {"X-Request-Id": "5b2c9d1e7a3f4a06-SJC", "Recurly-Version": "recurly.v2021-02-25"}


def _client(url: str) -> Any:
    import recurly  # type: ignore[import-untyped]

    host, _, port = url.removeprefix("http://").rpartition(":")
    client = recurly.Client("PLANTED0f3e9a7c2b4d6e8f1a3c5e7b9d0f2a4c", timeout=1)
    client._BaseClient__conn = http.client.HTTPConnection(host, int(port), timeout=1)
    return client


def _get(url: str) -> Any:
    return _client(url).get_account("code-acct-1042")


def _create(url: str) -> Any:
    return _client(url).create_account(
        {
            "code": "acct-1042",
            "email": "billing@example.com",
            "billing_info": {"token_id": "7z5vq8cknbto"},
        }
    )


def _err(type: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"type": type, "message": message, **extra}}


GET: list[Row] = [
    (
        "unauthorized",
        401,
        _err("unauthorized", "Unauthorized. Please check your API key and try again."),
        _H,
        AUTH,
        None,
        "the request carried no API key Recurly accepts",
    ),
    (
        "invalid_api_key",
        403,
        _err("invalid_api_key", "The API key provided is invalid"),
        _H,
        AUTH,
        None,
        "the private API key was regenerated or deleted",
    ),
    (
        "account_missing",
        404,
        _err(
            "not_found",
            "Couldn't find Account with code = acct-1042",
            params=[{"param": "account_id"}],
        ),
        _H,
        NF,
        None,
        "no account with that code on the site",
    ),
    (
        "unknown_version",
        406,
        _err(
            "unknown_api_version",
            "Unknown API version. Please specify a valid version in the Accept header.",
        ),
        _H,
        INT,
        None,
        "the client asked for an API version the site does not serve",
    ),
    (
        "server_error",
        500,
        _err("internal_server_error", "An unexpected error has occurred"),
        _H,
        NET,
        None,
        "Recurly failed while serving the request",
    ),
    (
        "unavailable_html",
        503,
        "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle"
        " this request.\n</body></html>\n",
        dict(_H, **{"Content-Type": "text/html"}),
        NET,
        None,
        "the API is down, an HTML page instead of JSON",
    ),
    (
        "gateway_timeout",
        504,
        "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n"
        "</body></html>\n",
        dict(_H, **{"Content-Type": "text/html"}),
        TO,
        None,
        "the load balancer gave up waiting for the API",
    ),
]
http_cases(FAM, _get, GET)

CREATE: list[Row] = [
    (
        "code_taken",
        422,
        _err(
            "validation",
            "Code has already been taken",
            params=[{"param": "code", "message": "has already been taken"}],
        ),
        _H,
        EXISTS,
        None,
        "an account with that code exists already",
    ),
    (
        "invalid_email",
        422,
        _err(
            "validation",
            "Email is invalid",
            params=[{"param": "email", "message": "is invalid"}],
        ),
        _H,
        INT,
        None,
        "the caller's email address fails validation",
    ),
    (
        "card_declined",
        422,
        _err(
            "transaction",
            "Your card was declined. In order to resolve the issue, you will need to contact"
            " your bank.",
            transaction_error={
                "object": "transaction_error",
                "transaction_id": "5b2c9d1e7a3f4a06b8c1d2e3f4a5b6c7",
                "category": "soft",
                "code": "declined",
                "message": "Your card was declined. In order to resolve the issue, you will"
                " need to contact your bank.",
                "merchant_advice": "The transaction was declined without specific information.",
            },
        ),
        _H,
        INT,
        None,
        "the issuing bank declined the card on the billing info",
    ),
    (
        "no_permission",
        403,
        _err("invalid_permissions", "The API key does not have permission to create accounts"),
        _H,
        AUTH,
        None,
        "the API key's scope does not allow writes",
    ),
]
http_cases(FAM, _create, CREATE, transport=False)


def _rate_limited(ctx: Http) -> Any:
    def route(method: str, path: str, body: bytes) -> Reply:
        return Reply(
            429,
            _err(
                "rate_limited",
                "You have made too many API requests in the last 5 minutes."
                " Please wait and try again.",
            ),
            dict(
                _H,
                **{
                    "X-RateLimit-Limit": "2000",
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset": str(int(time.time()) + 40),
                },
            ),
        )

    ctx.http.route = route
    return _get(ctx.http.url)


FAM.add(
    "rate_limited",
    RL,
    "HTTP 429: the site's five-minute request window is used up, its end as epoch seconds",
    _rate_limited,
    retry_after=40.0,
)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: _get(f"http://127.0.0.1:{c.net.garbage}"),
)
