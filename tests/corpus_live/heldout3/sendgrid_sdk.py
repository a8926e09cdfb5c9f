"""sendgrid (Twilio SendGrid's v3 client, on python-http-client) against a fake SendGrid v3
API answering its documented ``{"errors": [{"field": ..., "message": ...}]}`` bodies."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, QUOTA, RL, Row, family, http_cases, http_setup

FAM = family("sendgrid", "fake SendGrid v3 API", http_setup, half="heldout3")


def _client(url: str) -> Any:
    from sendgrid import SendGridAPIClient

    sg = SendGridAPIClient(api_key="SG.PLANTED-sendgrid-key", host=url)
    sg.client.timeout = 1
    return sg


def _send(url: str) -> Any:
    return _client(url).send(
        {
            "personalizations": [{"to": [{"email": "bob@example.org"}]}],
            "from": {"email": "app@example.org"},
            "subject": "hi",
            "content": [{"type": "text/plain", "value": "hello"}],
        }
    )


def _template(url: str) -> Any:
    return _client(url).client.templates._("d-0000000000000000000000000000000a").get()


def _e(message: str, field: str | None = None) -> dict[str, Any]:
    return {"errors": [{"field": field, "message": message, "help": None}]}


SEND: list[Row] = [
    (
        "bad_key",
        401,
        _e("The provided authorization grant is invalid, expired, or revoked"),
        {},
        AUTH,
        None,
        "the API key is wrong or revoked",
    ),
    (
        "no_scope",
        403,
        _e("access forbidden"),
        {},
        AUTH,
        None,
        "the key lacks the mail.send scope",
    ),
    (
        "credits",
        401,
        _e("Maximum credits exceeded"),
        {},
        QUOTA,
        None,
        "a 401 that is not a bad key: the plan's email credits are used up",
    ),
    (
        "bad_from",
        400,
        _e(
            "The from email does not contain a valid address.",
            "from.email",
        ),
        {},
        INT,
        None,
        "the request is invalid (the pack's input), no retry helps",
    ),
    (
        "too_large",
        413,
        _e("The JSON payload you have included in your request is too large."),
        {},
        INT,
        None,
        "the payload is over 20 MB: it never passes",
    ),
    (
        "too_many",
        429,
        _e("too many requests"),
        {
            "X-RateLimit-Limit": "600",
            "X-RateLimit-Remaining": "0",
        },
        RL,
        None,
        "the endpoint's rate limit",
    ),
    (
        "internal",
        500,
        _e("internal error"),
        {},
        NET,
        None,
        "SendGrid failed",
    ),
    (
        "bad_gateway",
        502,
        "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
        "</h1></center><hr><center>nginx</center></body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the front proxy's HTML page",
    ),
]
http_cases(FAM, _send, SEND)
http_cases(
    FAM,
    _template,
    [
        (
            "template_not_found",
            404,
            _e("resource not found"),
            {},
            NF,
            None,
            "the template id does not exist",
        )
    ],
    transport=False,
)
