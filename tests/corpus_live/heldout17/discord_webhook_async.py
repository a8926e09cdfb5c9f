"""discord.py's asynchronous webhook client (``discord.Webhook`` over an aiohttp session)
against a fake Discord HTTP API on 127.0.0.1 answering Discord's JSON error bodies
(``{"message", "code"}`` with Discord's numeric error codes, ``errors`` for an invalid form
body) with their statuses, the rate-limit answer (``retry_after`` in the body, the
``X-RateLimit-*`` headers, ``Via`` as Discord's edge sends it) and Cloudflare's ban page
(no ``Via``); plus the session's timeout and the transport failures. discord.py retries a
rate-limited webhook call itself (five tries, sleeping the body's ``retry_after``); Discord's
5xx answers are left out, as the library sleeps 25 s over them before giving up."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NF, RL, Row, family, http_cases, http_setup

FAM = family("discord.py", "fake Discord webhook API", http_setup, half="heldout17")

_ID = 1184702331890262136
_TOKEN = "PLANTEDdiscordwebhooktoken-3xk9Qw7LmN2pR5tV8yZ"


async def _send(url: str, *, edit: bool = False) -> Any:
    import aiohttp
    import discord
    from discord.http import Route

    old = Route.BASE
    Route.BASE = url
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=1)) as session:
            hook = discord.Webhook.partial(_ID, _TOKEN, session=session)
            if edit:
                return await hook.edit_message(1184702899912265748, content="deploy finished")
            return await hook.send("deploy finished: build #4127 is green", wait=True)
    finally:
        Route.BASE = old


def _edit(url: str) -> Any:
    return _send(url, edit=True)


def _e(message: str, code: int, **extra: Any) -> dict[str, Any]:
    return {"message": message, "code": code, **extra}


ROWS: list[Row] = [
    (
        "bad_token",
        401,
        _e("Invalid Webhook Token", 50027),
        {},
        AUTH,
        None,
        "the webhook's token is wrong (regenerated)",
    ),
    (
        "unknown_webhook",
        404,
        _e("Unknown Webhook", 10015),
        {},
        NF,
        None,
        "the webhook was deleted",
    ),
    (
        "missing_permissions",
        403,
        _e("Missing Permissions", 50013),
        {},
        AUTH,
        None,
        "the webhook may not post in that channel",
    ),
    (
        "invalid_form_body",
        400,
        _e(
            "Invalid Form Body",
            50035,
            errors={
                "content": {
                    "_errors": [
                        {
                            "code": "BASE_TYPE_MAX_LENGTH",
                            "message": "Must be 2000 or fewer in length.",
                        }
                    ]
                }
            },
        ),
        {},
        INT,
        None,
        "the message is too long (the caller's input)",
    ),
    (
        "empty_message",
        400,
        _e("Cannot send an empty message", 50006),
        {},
        INT,
        None,
        "the message has no content (the caller's input)",
    ),
    (
        "too_large",
        413,
        _e("Request entity too large", 40005),
        {},
        INT,
        None,
        "the payload is over the upload limit (the caller's input)",
    ),
    (
        "rate_limited",
        429,
        {"message": "You are being rate limited.", "retry_after": 0.2, "global": False},
        {
            "Retry-After": "1",
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset-After": "0.2",
            "X-RateLimit-Bucket": "7c7a1d0a6f3b5e2c9d8e4f1a2b3c4d5e",
            "X-RateLimit-Scope": "shared",
            "Via": "1.1 google",
        },
        RL,
        None,
        "the webhook's bucket stayed exhausted through the library's five tries",
    ),
    (
        "cloudflare_ban",
        429,
        "error code: 1015",
        {"Content-Type": "text/plain; charset=UTF-8", "Retry-After": "600"},
        RL,
        600.0,
        "Cloudflare banned the address for too many invalid requests",
    ),
]
http_cases(FAM, _send, ROWS)
http_cases(
    FAM,
    _edit,
    [
        (
            "unknown_message",
            404,
            _e("Unknown Message", 10008),
            {},
            NF,
            None,
            "editing a message that was deleted",
        )
    ],
    transport=False,
)
