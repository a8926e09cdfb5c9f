"""python-intercom (Intercom's Python SDK v4+, a Fern client generated from Intercom's OpenAPI
spec, httpx underneath) against a fake Intercom REST API answering its error bodies
(``{"type": "error.list", "request_id", "errors": [{code, message, field}]}``) and statuses:
401 invalid or revoked tokens, 403 a plan without the API, 404 an unknown contact, 409 a
contact that already exists, 400 bad parameters, 429 with Intercom's ``X-RateLimit-*``
headers (the reset as epoch seconds), 500, 503 and 504; plus the SDK's own timeout and the
transport failures. The SDK's retries stay at none (its default)."""

from __future__ import annotations

import time
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    TO,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("python-intercom", "fake Intercom REST API", http_setup, half="heldout16")


def _client(url: str) -> Any:
    from intercom import Intercom

    return Intercom(token="dG9rOlBMQU5URUQ6aW50ZXJjb20=", base_url=url, timeout=1.0)


def _create(url: str) -> Any:
    from intercom import CreateContactRequestWithEmail

    return _client(url).contacts.create(
        request=CreateContactRequestWithEmail(email="ada@acme.example", name="Ada Lovelace")
    )


def _errors(code: str, message: str, field: str | None = None) -> Any:
    err: dict[str, str] = {"code": code, "message": message}
    if field is not None:
        err["field"] = field
    return {
        "type": "error.list",
        "request_id": "0004m6a1pla7nted9d80",
        "errors": [err],
    }


ROWS: list[Row] = [
    (
        "bad_token",
        401,
        _errors("unauthorized", "Access Token Invalid"),
        {},
        AUTH,
        None,
        "the access token is not valid",
    ),
    (
        "token_revoked",
        401,
        _errors("token_revoked", "Token revoked"),
        {},
        AUTH,
        None,
        "the app's access token was revoked",
    ),
    (
        "plan_restricted",
        403,
        _errors("api_plan_restricted", "Active subscription needed."),
        {},
        AUTH | QUOTA,
        None,
        "the workspace's plan does not include the API",
    ),
    (
        "contact_exists",
        409,
        _errors(
            "conflict",
            "A contact matching those details already exists with id=6762f0dd1bb69f9f2193bb83",
        ),
        {},
        EXISTS,
        None,
        "a contact with this email already exists",
    ),
    (
        "bad_email",
        400,
        _errors("parameter_invalid", "Email address is invalid", "email"),
        {},
        INT,
        None,
        "the email is not valid (the caller's input)",
    ),
    (
        "internal",
        500,
        _errors("server_error", "Server Error"),
        {},
        NET,
        None,
        "Intercom failed",
    ),
    (
        "unavailable",
        503,
        _errors("service_unavailable", "Sorry, the API service is temporarily unavailable"),
        {},
        NET,
        None,
        "the API is temporarily unavailable",
    ),
    (
        "gateway_timeout",
        504,
        _errors("server_timeout", "Server timed out processing the request"),
        {},
        TO | NET,
        None,
        "Intercom did not finish the request in time",
    ),
]
http_cases(FAM, _create, ROWS)


@FAM.case(
    "rate_limited",
    RL,
    "HTTP 429: the app's per-minute request limit is used up, its reset as epoch seconds",
    retry_after=8.0,
)
def _rate_limited(ctx: Http) -> Any:
    ctx.http.set(
        429,
        _errors("rate_limit_exceeded", "Exceeded rate limit of 10000 in 60 seconds"),
        {
            "X-RateLimit-Limit": "10000",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(int(time.time()) + 8),
        },
    )
    return _create(ctx.http.url)


@FAM.case("contact_not_found", NF, "HTTP 404: the contact does not exist")
def _missing(ctx: Http) -> Any:
    ctx.http.set(404, _errors("not_found", "User Not Found"))
    return _client(ctx.http.url).contacts.find(contact_id="6762f0dd1bb69f9f2193bb84")
