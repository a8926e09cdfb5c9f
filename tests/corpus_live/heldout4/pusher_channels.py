"""pusher (Pusher Channels' server library) triggering events against a fake Channels HTTP
API answering its documented plain-text errors: 400 (a bad channel name, an event over
10 kB), 401 (the HMAC signature or the timestamp is refused), 403 (the app is disabled, or
over its message quota), 404, 413, 429 and 5xx."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, QUOTA, RL, Row, family, http_cases, http_setup

FAM = family("pusher", "fake Pusher Channels HTTP API", http_setup, half="heldout4")


def _trigger(url: str) -> Any:
    import pusher

    host, port = url.removeprefix("http://").rsplit(":", 1)
    client = pusher.Pusher(
        app_id="1700001",
        key="PLANTEDpusherkey0000",
        secret="PLANTEDpushersecret0000",
        ssl=False,
        host=host,
        port=int(port),
        timeout=1,
    )
    return client.trigger("private-orders", "order-shipped", {"id": 42})


ROWS: list[Row] = [
    (
        "bad_signature",
        401,
        'Invalid signature: you should have sent HmacSHA256Hex("POST\\n/apps/1700001/events'
        "\\nauth_key=PLANTEDpusherkey0000&auth_timestamp=1764410000&auth_version=1.0&body_md5="
        '0f3c4f2e", your_secret_key), but you sent "9b1d0c"',
        {},
        AUTH,
        None,
        "the secret is wrong",
    ),
    (
        "unknown_key",
        401,
        "Unknown auth_key",
        {},
        AUTH,
        None,
        "the app key does not exist",
    ),
    (
        "app_disabled",
        403,
        "Application disabled",
        {},
        AUTH | INT,
        None,
        "the app is disabled in the dashboard",
    ),
    (
        "over_quota",
        403,
        "Message quota exceeded for this billing period",
        {},
        QUOTA,
        None,
        "the plan's daily message quota is used up: waiting seconds does not help",
    ),
    (
        "no_app",
        404,
        "Unknown app_id 1700001",
        {},
        NF,
        None,
        "the app id does not exist",
    ),
    (
        "event_too_large",
        413,
        "Event data too large: maximum size is 10240 bytes",
        {},
        INT,
        None,
        "the event is over 10 kB: it never passes",
    ),
    (
        "bad_channel",
        400,
        "Invalid channel name 'private-orders ': must match ^[-a-zA-Z0-9_=@,.;]+$",
        {},
        INT,
        None,
        "a malformed channel name (the pack's input)",
    ),
    (
        "rate_limited",
        429,
        "Too many requests: rate limit exceeded",
        {"Retry-After": "1"},
        RL,
        None,
        "the HTTP API's rate limit (the library keeps the status and body only: no delay)",
    ),
    (
        "unavailable",
        503,
        "Service Unavailable",
        {},
        NET,
        None,
        "Channels is unavailable",
    ),
]
http_cases(FAM, _trigger, ROWS, content_type="text/plain")
