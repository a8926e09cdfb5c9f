"""dwollav2 (Dwolla's official Python client, requests underneath) against a fake Dwolla API
on 127.0.0.1: ``/token`` hands out an application token (client credentials), or answers
the OAuth error body (``{"error"}``) for a bad key; each case's API call then gets Dwolla's
documented HAL error body (``{"code", "message"}``, ``_embedded.errors[]`` with their own
``code`` and ``path`` for a ``ValidationError``) and status: an invalid or expired token, a
forbidden resource, a missing funding source, a duplicate customer, invalid input,
insufficient funds, a transfer that can no longer be cancelled, the rate limit, a server
error; plus a request timeout and the transport failures. The library raises one ``Error``
subclass per body ``code``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    Family,
    Http,
    Reply,
    family,
    http_setup,
    transport_cases,
)

FAM: Family = family("dwollav2", "fake Dwolla API", http_setup, half="heldout17")

_API = "https://api.dwolla.com"


def _client(url: str) -> Any:
    import dwollav2  # type: ignore[import-untyped]

    class Local(dwollav2.Client):  # type: ignore[misc]
        ENVIRONMENTS = {
            "local": {"auth_url": f"{url}/auth", "token_url": f"{url}/token", "api_url": url}
        }

    return Local(
        key="PLANTEDdwollakey4f1c",
        secret="PLANTEDdwollasecret9e2d",
        environment="local",
        requests={"timeout": 1},
    )


def _create_customer(url: str) -> Any:
    token = _client(url).Auth.client()
    return token.post(
        "customers",
        {
            "firstName": "Jane",
            "lastName": "Merchant",
            "email": "jane@merchant.example",
            "type": "personal",
            "address1": "99-99 33rd St",
            "city": "Some City",
            "state": "NY",
            "postalCode": "11101",
            "dateOfBirth": "1970-01-01",
            "ssn": "1234",
        },
    )


def _transfer(url: str) -> Any:
    token = _client(url).Auth.client()
    return token.post(
        "transfers",
        {
            "_links": {
                "source": {"href": f"{_API}/funding-sources/707177c3-bf15-4e7e-b37c-55c3898d9bf4"},
                "destination": {
                    "href": f"{_API}/funding-sources/AB443D36-3757-44C1-A1B4-29727FB3111C"
                },
            },
            "amount": {"currency": "USD", "value": "1250.00"},
        },
        {"Idempotency-Key": "19051a62-3403-11e6-ac61-9e71128cae77"},
    )


def _funding_source(url: str) -> Any:
    token = _client(url).Auth.client()
    return token.get("funding-sources/5cfcdc41-10f6-4a45-b11d-7ac89893d985")


def _cancel(url: str) -> Any:
    token = _client(url).Auth.client()
    return token.post("transfers/15c6bcce-46f7-e811-8112-e8dd3bececa8", {"status": "cancelled"})


def _route(token: Reply | None, answer: Reply) -> Callable[[str, str, bytes], Reply | None]:
    def route(method: str, path: str, body: bytes) -> Reply | None:
        if path.startswith("/token"):
            return token or Reply(
                200,
                {
                    "access_token": "PLANTEDdwollaaccesstoken0f3c5e2a9b7d41c8",
                    "token_type": "bearer",
                    "expires_in": 3600,
                },
            )
        return answer

    return route


def _case(
    id: str,
    expect: frozenset[str],
    reason: str,
    status: int,
    body: Any,
    *,
    call: Callable[[str], Any] = _create_customer,
    token: Reply | None = None,
    content_type: str = "application/vnd.dwolla.v1.hal+json",
) -> None:
    def run(ctx: Http) -> Any:
        ctx.http.route = _route(token, Reply(status, body, content_type=content_type))
        return call(ctx.http.url)

    shown = token.status if token is not None else status
    FAM.add(id, expect, f"HTTP {shown}: {reason}", run)


def _validation(code: str, message: str, path: str, links: Any = None) -> dict[str, Any]:
    return {
        "code": "ValidationError",
        "message": "Validation error(s) present. See embedded errors list for more details.",
        "_embedded": {
            "errors": [{"code": code, "message": message, "path": path, "_links": links or {}}]
        },
    }


_case(
    "invalid_client",
    AUTH,
    "the application key or secret is wrong (token endpoint)",
    200,
    {},
    token=Reply(401, {"error": "invalid_client"}),
)
_case(
    "invalid_access_token",
    AUTH,
    "the access token is not valid",
    401,
    {"code": "InvalidAccessToken", "message": "Invalid access token."},
)
_case(
    "expired_access_token",
    AUTH,
    "the access token has expired",
    401,
    {"code": "ExpiredAccessToken", "message": "Access token is expired."},
)
_case(
    "forbidden",
    AUTH,
    "the application may not create customers of this type",
    403,
    {
        "code": "Forbidden",
        "message": "The supplied credentials are not authorized for this resource.",
    },
)
_case(
    "funding_source_missing",
    NF,
    "the funding source does not exist",
    404,
    {"code": "NotFound", "message": "Funding source not found."},
    call=_funding_source,
)
_case(
    "duplicate_customer",
    EXISTS,
    "a customer with that email already exists",
    400,
    _validation(
        "Duplicate",
        "A customer with the specified email already exists.",
        "/email",
        {
            "about": {
                "href": f"{_API}/customers/707a8bd9-13a1-4ebe-a0a7-f63c9b4c0eb3",
                "type": "application/vnd.dwolla.v1.hal+json",
                "resource-type": "customer",
            }
        },
    ),
)
_case(
    "invalid_parameter",
    INT,
    "the date of birth is invalid (the caller's input)",
    400,
    _validation("Invalid", "DateOfBirth must be a valid date.", "/dateOfBirth"),
)
_case(
    "insufficient_funds",
    QUOTA | INT,
    "the balance cannot cover the transfer",
    400,
    _validation("InsufficientFunds", "Insufficient funds.", "/amount/value"),
    call=_transfer,
)
_case(
    "cannot_cancel",
    INT,
    "the transfer was already processed and can no longer be cancelled",
    400,
    {"code": "InvalidResourceState", "message": "A pending transfer can only be cancelled."},
    call=_cancel,
)
_case(
    "too_many_requests",
    RL,
    "the application sent too many requests, no delay given",
    429,
    {
        "code": "TooManyRequests",
        "message": "Too many requests. Please slow down and try again.",
    },
)
_case(
    "server_error",
    NET,
    "Dwolla failed",
    500,
    {"code": "ServerError", "message": "A server error occurred. Error ID: 8c2a5b7e-1f0d-4c3b."},
)
transport_cases(FAM, lambda host, port: _create_customer(f"http://{host}:{port}"), dns_port=80)
