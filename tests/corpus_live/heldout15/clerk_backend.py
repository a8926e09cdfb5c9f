"""clerk-backend-api (Clerk's Backend API SDK, a Speakeasy client generated from Clerk's
OpenAPI document, httpx underneath) against a fake Clerk Backend API answering its documented
error bodies (``{"errors": [{"message", "long_message", "code", "meta"}], "clerk_trace_id"}``)
and statuses: 401 invalid secret key, 403, 404 unknown user, 422 identifier taken and form
errors, 429 with ``Retry-After``, 402 a plan limit, 500 and 503; plus the SDK's own timeout and
the transport failures. The SDK's retries are turned off."""

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

FAM = family("clerk", "fake Clerk Backend API", http_setup, half="heldout15")


def _sdk(url: str) -> Any:
    from clerk_backend_api import Clerk

    return Clerk(
        bearer_auth="sk_test_PLANTEDclerksecretkey",
        server_url=url,
        retry_config=None,
        timeout_ms=1000,
    )


def _get(url: str) -> Any:
    return _sdk(url).users.get(user_id="user_2kLmN8pQ4rS6tU0vW2xY4zA6bC8")


def _create(url: str) -> Any:
    return _sdk(url).users.create(
        email_address=["ada@example.com"], password="correct-horse-battery-staple"
    )


def _e(code: str, message: str, long: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    err: dict[str, Any] = {"message": message, "long_message": long, "code": code}
    if meta is not None:
        err["meta"] = meta
    return {"errors": [err], "clerk_trace_id": "3f0c5e9a7b1d2e4f6a8b0c2d4e6f8a0b"}


ROWS: list[Row] = [
    (
        "bad_secret_key",
        401,
        _e(
            "clerk_key_invalid",
            "Secret Key is invalid",
            "The provided Clerk Secret Key is invalid. Make sure that your Clerk Secret Key is correct.",
        ),
        {},
        AUTH,
        None,
        "the secret key is not valid",
    ),
    (
        "forbidden",
        403,
        _e(
            "authorization_invalid",
            "Unauthorized request",
            "You are not authorized to perform this request",
        ),
        {},
        AUTH,
        None,
        "the key may not perform this request",
    ),
    (
        "user_not_found",
        404,
        _e("resource_not_found", "not found", "User not found"),
        {},
        NF,
        None,
        "the user does not exist",
    ),
    (
        "rate_limited",
        429,
        _e("too_many_requests", "Too many requests", "Too many requests, retry later"),
        {"Retry-After": "2"},
        RL,
        2.0,
        "over the Backend API's limit, with the server's delay",
    ),
    (
        "internal",
        500,
        _e(
            "internal_clerk_error",
            "Oops, an unexpected error occurred",
            "There was an internal error on our servers. We've been notified and are working on fixing it.",
        ),
        {},
        NET,
        None,
        "Clerk failed",
    ),
    (
        "unavailable",
        503,
        _e(
            "service_unavailable",
            "Service unavailable",
            "The service is temporarily unavailable, please try again later.",
        ),
        {},
        NET,
        None,
        "Clerk is temporarily unavailable",
    ),
]
http_cases(FAM, _get, ROWS)


def _on_create(status: int, body: Any, expect: frozenset[str], id: str, why: str) -> None:
    def run(ctx: Http) -> Any:
        ctx.http.set(status, body)
        return _create(ctx.http.url)

    FAM.add(id, expect, f"HTTP {status}: {why}", run)


_on_create(
    422,
    _e(
        "form_identifier_exists",
        "That email address is taken. Please try another.",
        "That email address is taken. Please try another.",
        {"param_name": "email_address"},
    ),
    EXISTS,
    "email_taken",
    "a user with this email address already exists",
)
_on_create(
    422,
    _e(
        "form_password_pwned",
        "Password has been found in an online data breach. For account safety, please use a different password.",
        "Password has been found in an online data breach. For account safety, please use a different password.",
        {"param_name": "password"},
    ),
    INT,
    "password_pwned",
    "the password was found in a breach (the caller's input)",
)
_on_create(
    422,
    _e(
        "form_param_format_invalid",
        "is invalid",
        "email_address must be a valid email address.",
        {"param_name": "email_address"},
    ),
    INT,
    "bad_email",
    "the email address is malformed (the caller's input)",
)
_on_create(
    402,
    _e(
        "user_quota_exceeded",
        "User quota exceeded",
        "You have reached your limit of 10 users. If you need more users, please upgrade your plan.",
    ),
    QUOTA,
    "user_quota",
    "the instance's plan allows no more users",
)
