"""python-freshdesk (a Freshdesk API v2 client, requests underneath) against a fake Freshdesk
API v2 on 127.0.0.1 answering Freshdesk's documented error bodies (``{"code", "message"}``
for authentication and access errors, ``{"description": "Validation failed", "errors":
[{"field", "message", "code"}]}`` for invalid input and duplicates) with their statuses, a
404 with no body, the rate limit's 429 with ``Retry-After``, server errors; plus a session
timeout and the transport failures. The library raises a ``FreshdeskError`` subclass per
status (``FreshdeskRateLimited`` with the delay in its message)."""

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

FAM = family("python-freshdesk", "fake Freshdesk API v2", http_setup, half="heldout17")


def _api(url: str) -> Any:
    from freshdesk.v2.api import API  # type: ignore[import-untyped]

    api = API("acme.freshdesk.com", "PLANTEDfreshdeskapikey0f3c5e")
    api._api_prefix = f"{url}/api/v2/"
    session = api._session
    plain = session.request

    def request(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("timeout", 1)
        return plain(*args, **kwargs)

    session.request = request
    return api


def _ticket(url: str) -> Any:
    return _api(url).tickets.create_ticket(
        "Refund not received",
        email="jane@customer.example",
        description="I was promised a refund on order 4127 two weeks ago.",
        priority=2,
        status=2,
    )


def _contact(url: str) -> Any:
    return _api(url).contacts.create_contact(name="Jane Customer", email="jane@customer.example")


def _get_ticket(url: str) -> Any:
    return _api(url).tickets.get_ticket(99812)


def _invalid(field: str, message: str, code: str, **extra: Any) -> dict[str, Any]:
    return {
        "description": "Validation failed",
        "errors": [{"field": field, **extra, "message": message, "code": code}],
    }


ROWS: list[Row] = [
    (
        "invalid_credentials",
        401,
        {
            "code": "invalid_credentials",
            "message": "You have to be logged in to perform this action.",
        },
        {},
        AUTH,
        None,
        "the API key is wrong",
    ),
    (
        "access_denied",
        403,
        {"code": "access_denied", "message": "You are not authorized to perform this action."},
        {},
        AUTH,
        None,
        "the agent behind the key may not create tickets",
    ),
    (
        "feature_not_in_plan",
        403,
        {
            "code": "require_feature",
            "message": "The Custom Ticket Fields feature(s) is/are not supported in your plan. "
            "Please upgrade your account to use it.",
        },
        {},
        AUTH,
        None,
        "the account's plan lacks the feature",
    ),
    (
        "invalid_value",
        400,
        _invalid("priority", "It should be one of these values: '1,2,3,4'", "invalid_value"),
        {},
        INT,
        None,
        "the priority is out of range (the caller's input)",
    ),
    (
        "missing_field",
        400,
        _invalid(
            "requester_id",
            "Please fill at least 1 of email, mobile, phone, twitter_id, unique_external_id, "
            "requester_id fields",
            "missing_field",
        ),
        {},
        INT,
        None,
        "no requester was given (the caller's input)",
    ),
    (
        "unsupported_content_type",
        415,
        {
            "code": "invalid_content_type",
            "message": "Content-Type header should have application/json",
        },
        {},
        INT,
        None,
        "the request's content type is wrong",
    ),
    (
        "rate_limited",
        429,
        {"message": "You have exceeded the limit of requests per minute"},
        {
            "Retry-After": "37",
            "X-Ratelimit-Total": "200",
            "X-Ratelimit-Remaining": "0",
            "X-Ratelimit-Used-CurrentRequest": "1",
        },
        RL,
        37.0,
        "the account's per-minute API limit was hit",
    ),
    (
        "internal",
        500,
        {"code": "internal_error", "message": "We're sorry, but something went wrong."},
        {},
        NET,
        None,
        "Freshdesk failed",
    ),
    (
        "maintenance",
        503,
        "<html><body><h1>Freshdesk is undergoing scheduled maintenance</h1></body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the helpdesk is down for maintenance",
    ),
]
http_cases(FAM, _ticket, ROWS)
http_cases(
    FAM,
    _contact,
    [
        (
            "duplicate_contact",
            409,
            _invalid(
                "email",
                "It should be a unique value",
                "duplicate_value",
                additional_info={"user_id": 48000123456},
            ),
            {},
            EXISTS,
            None,
            "a contact with that email already exists",
        )
    ],
    transport=False,
)
http_cases(
    FAM,
    _get_ticket,
    [("unknown_ticket", 404, b"", {}, NF, None, "the ticket does not exist (no body)")],
    transport=False,
)
