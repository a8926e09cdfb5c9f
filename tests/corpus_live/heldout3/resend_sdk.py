"""resend (Resend's Python SDK) against a fake Resend API answering its documented error
bodies (``{"statusCode": 429, "name": "daily_quota_exceeded", "message": ...}``): the error
``name`` says what the status cannot (three different 429s)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, QUOTA, RL, Row, family, http_cases, http_setup

FAM = family("resend", "fake Resend API", http_setup, half="heldout3")


def _configure(url: str) -> Any:
    import resend
    from resend.http_client_requests import RequestsClient

    resend.api_key = "re_PLANTED_resend_key"
    resend.api_url = url
    resend.default_http_client = RequestsClient(timeout=1)
    return resend


def _send(url: str) -> Any:
    resend = _configure(url)
    return resend.Emails.send(
        {
            "from": "App <app@example.org>",
            "to": ["bob@example.org"],
            "subject": "hi",
            "text": "hello",
        }
    )


def _get(url: str) -> Any:
    return _configure(url).Emails.get("4ef9a417-02e9-4d39-ad75-9611e0fcc33c")


def _e(status: int, name: str, message: str) -> dict[str, Any]:
    return {"statusCode": status, "name": name, "message": message}


SEND: list[Row] = [
    (
        "missing_key",
        401,
        _e(401, "missing_api_key", "Missing API key in the authorization header."),
        {},
        AUTH,
        None,
        "no API key reached the server",
    ),
    (
        "invalid_key",
        403,
        _e(403, "invalid_api_key", "API key is invalid"),
        {},
        AUTH,
        None,
        "the API key is invalid",
    ),
    (
        "restricted_key",
        401,
        _e(401, "restricted_api_key", "This API key is restricted to only send emails"),
        {},
        AUTH,
        None,
        "the key may not call this endpoint",
    ),
    (
        "testing_only",
        403,
        _e(
            403,
            "validation_error",
            "You can only send testing emails to your own email address (app@example.org). To "
            "send emails to other recipients, please verify a domain at resend.com/domains, and "
            "change the `from` address to an email using this domain.",
        ),
        {},
        AUTH | INT,
        None,
        "an unverified account may send only to itself",
    ),
    (
        "invalid_from",
        422,
        _e(
            422,
            "validation_error",
            "Invalid `from` field. The email address needs to follow the `email@example.com` or "
            "`Name <email@example.com>` format.",
        ),
        {},
        INT,
        None,
        "the request is invalid (the pack's input)",
    ),
    (
        "rate_limited",
        429,
        _e(
            429,
            "rate_limit_exceeded",
            "Too many requests. You can only make 2 requests per second. See rate limit response "
            "headers for more information. Or contact support to increase rate limit.",
        ),
        {
            "ratelimit-limit": "2",
            "ratelimit-remaining": "0",
            "ratelimit-reset": "1",
            "retry-after": "1",
        },
        RL,
        1.0,
        "the team's request rate, with retry-after",
    ),
    (
        "daily_quota",
        429,
        _e(429, "daily_quota_exceeded", "You have reached your daily email sending quota."),
        {},
        QUOTA | RL,
        None,
        "the plan's daily sending quota (it resets the next day)",
    ),
    (
        "monthly_quota",
        429,
        _e(429, "monthly_quota_exceeded", "You have reached your monthly email sending quota."),
        {},
        QUOTA,
        None,
        "the plan's monthly sending quota: upgrade or wait for the next month",
    ),
    (
        "idempotency_mismatch",
        409,
        _e(
            409,
            "invalid_idempotent_request",
            "Same idempotency key used with a different request payload.",
        ),
        {},
        INT,
        None,
        "the idempotency key was reused with another payload (the pack's bug)",
    ),
    (
        "security_error",
        451,
        _e(451, "security_error", "We may have found a security issue with the request."),
        {},
        INT,
        None,
        "Resend refuses the content",
    ),
    (
        "application_error",
        500,
        _e(500, "application_error", "An unexpected error occurred."),
        {},
        NET,
        None,
        "Resend failed",
    ),
    (
        "gateway_html",
        502,
        "<html><head><title>502 Bad Gateway</title></head><body>cloudflare</body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the CDN's HTML page",
    ),
]
http_cases(FAM, _send, SEND)
http_cases(
    FAM,
    _get,
    [
        (
            "email_not_found",
            404,
            _e(404, "not_found", "Email not found"),
            {},
            NF,
            None,
            "the email id does not exist",
        )
    ],
    transport=False,
)
