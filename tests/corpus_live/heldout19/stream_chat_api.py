"""stream-chat (Stream's Chat API, a requests client): its sync ``StreamChat`` client sends
a message to a channel against a fake Stream Chat API on 127.0.0.1 answering the errors
Stream sends (``{"code", "message", "StatusCode", "duration", "more_info"}`` bodies) with
their statuses and rate-limit headers: a wrong API key, a bad or expired token signature, a
missing permission, an unknown channel, a duplicate message id, the caller's bad input,
rate limits, server errors and a proxy's page; plus the client's own timeout
and the transport failures. The client raises one ``StreamAPIException`` for every
status (Stream's code and message in its text)."""

from __future__ import annotations

import time
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    RL,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("stream-chat", "fake Stream Chat API", http_setup, half="heldout19")


def _send(url: str) -> Any:
    from stream_chat import StreamChat

    client = StreamChat(
        api_key="PLANTEDk7xq2m", api_secret="PLANTEDsecret9h3v5b8n1c", timeout=1, base_url=url
    )
    channel = client.channel("messaging", "order-A-99812")
    return channel.send_message({"id": "msg-A-99812-1", "text": "Your order shipped"}, "support")


def _e(code: int, message: str, status: int) -> dict[str, Any]:
    return {
        "code": code,
        "message": message,
        "StatusCode": status,
        "duration": "0.00ms",
        "more_info": "https://getstream.io/chat/docs/api_errors_response",
        "details": [],
    }


ROWS: list[Row] = [
    (
        "api_key_invalid",
        401,
        _e(2, 'api_key not valid, make sure api_key "PLANTEDk7xq2m" exists', 401),
        {},
        AUTH,
        None,
        "the API key belongs to no app",
    ),
    (
        "signature_invalid",
        401,
        _e(
            43,
            "JWTAuth error: signature is not valid. Make sure the token is created "
            'using the secret for API key "PLANTEDk7xq2m"',
            401,
        ),
        {},
        AUTH,
        None,
        "the server token was signed with another app's secret",
    ),
    (
        "token_expired",
        401,
        _e(40, "JWTAuth error: token has expired", 401),
        {},
        AUTH,
        None,
        "the token has expired",
    ),
    (
        "not_allowed",
        403,
        _e(
            17,
            "SendMessage failed with error: \"User 'support' with role 'user' is not "
            "allowed to perform action CreateMessage in scope 'messaging'\"",
            403,
        ),
        {},
        AUTH,
        None,
        "the sending user's role may not post in this channel type",
    ),
    (
        "channel_missing",
        404,
        _e(
            16,
            'SendMessage failed with error: "Can\'t find channel with id messaging:order-A-99812"',
            404,
        ),
        {},
        NF,
        None,
        "the channel does not exist",
    ),
    (
        "duplicate_message",
        400,
        _e(
            4,
            'SendMessage failed with error: "a message with ID msg-A-99812-1 already exists"',
            400,
        ),
        {},
        EXISTS,
        None,
        "a message with this id was already sent",
    ),
    (
        "input_error",
        400,
        _e(4, 'SendMessage failed with error: "message.text is longer than 5000 characters"', 400),
        {},
        INT,
        None,
        "the message text is over the limit (the caller's input)",
    ),
    (
        "internal",
        500,
        _e(-1, "internal system error", 500),
        {},
        NET,
        None,
        "the API failed",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        "<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the edge reached no backend (an HTML page)",
    ),
]
http_cases(FAM, _send, ROWS)


@FAM.case(
    "rate_limited",
    RL,
    "HTTP 429: the endpoint's per-minute limit is spent; the reset is an epoch second",
    retry_after=2.0,
)
def _rate_limited(ctx: Http) -> Any:
    reset = int(time.time()) + 2
    ctx.http.set(
        429,
        _e(
            9,
            'SendMessage failed with error: "Too many requests, check response headers '
            'for more information."',
            429,
        ),
        {
            "X-RateLimit-Limit": "10000",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(reset),
        },
    )
    return _send(ctx.http.url)
