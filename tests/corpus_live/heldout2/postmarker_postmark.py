"""postmarker (a Postmark client) against a fake Postmark API answering its documented API
error codes (``{"ErrorCode": 405, "Message": ...}`` on HTTP 422): numbers of Postmark's own
space that overlap HTTP's (405, 406, 410...) and mean something else."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("postmarker", "fake Postmark API (API error codes)", http_setup, half="heldout2")


def _client(url: str) -> Any:
    from postmarker.core import PostmarkClient

    return PostmarkClient(
        server_token="PLANTED-postmark-token", root_api_url=url + "/", max_retries=0, timeout=1
    )


def _send(url: str) -> Any:
    return _client(url).emails.send(
        From="app@example.org", To="bob@example.org", Subject="hi", TextBody="hello"
    )


def _message(url: str) -> Any:
    return _client(url).messages.outbound.get("0a129aee-e1cd-480d-b08d-4f48548ff48d")


def _e(code: int, message: str) -> dict[str, Any]:
    return {"ErrorCode": code, "Message": message}


SEND: list[Row] = [
    (
        "bad_token",
        401,
        _e(
            10,
            "The Server Token you provided in the X-Postmark-Server-Token request header was "
            "invalid. Please verify that you are using a valid token.",
        ),
        {},
        AUTH,
        None,
        "ErrorCode 10: bad or missing server token",
    ),
    (
        "no_credits",
        422,
        _e(405, "Not allowed to send: you have run out of credits."),
        {},
        QUOTA,
        None,
        "ErrorCode 405 (not HTTP 405): the account has no credits left",
    ),
    (
        "inactive_recipient",
        422,
        _e(
            406,
            "You tried to send to recipient(s) that have been marked as inactive. Found inactive "
            "addresses: bob@example.org. Inactive recipients are ones that have generated a hard "
            "bounce, a spam complaint, or a manual suppression.",
        ),
        {},
        INT,
        None,
        "ErrorCode 406: the recipient is suppressed; a business outcome, no retry helps",
    ),
    (
        "invalid_email",
        422,
        _e(300, "Error parsing 'To': Illegal email address 'bob'. It must contain the '@' symbol."),
        {},
        INT,
        None,
        "ErrorCode 300: an invalid email request (the pack's input)",
    ),
    (
        "account_pending",
        422,
        _e(
            412,
            "Your account is pending approval. You can only send to recipients within your own "
            "domain.",
        ),
        {},
        AUTH | INT,
        None,
        "ErrorCode 412: the account may not send there until approved",
    ),
    (
        "too_many_batch",
        422,
        _e(410, "Too many batch messages (501). You may only send up to 500 messages at once."),
        {},
        INT,
        None,
        "ErrorCode 410 (not HTTP 410 Gone): the batch is too large, never passes",
    ),
    (
        "rate_limited",
        429,
        _e(429, "Rate limit exceeded: you are sending requests too fast."),
        {},
        RL,
        None,
        "HTTP 429",
    ),
    (
        "server_error",
        500,
        _e(0, "An internal server error occurred."),
        {},
        NET,
        None,
        "Postmark failed (5xx)",
    ),
    (
        "maintenance",
        503,
        "<html><body><h1>503 Service Unavailable</h1>Postmark is offline for maintenance."
        "</body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "offline for maintenance (an HTML page, no JSON)",
    ),
]
http_cases(FAM, _send, SEND)
http_cases(
    FAM,
    _message,
    [
        (
            "message_not_found",
            422,
            _e(701, "This message was not found."),
            {},
            NF,
            None,
            "ErrorCode 701 on HTTP 422: the message id does not exist",
        )
    ],
    transport=False,
)
