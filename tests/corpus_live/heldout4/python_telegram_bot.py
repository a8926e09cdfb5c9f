"""python-telegram-bot (v22, async) against a fake Telegram Bot API answering its documented
error objects (``{"ok": false, "error_code", "description", "parameters"}``): 401
``Unauthorized``, 400 ``Bad Request: chat not found``, 403 ``Forbidden: bot was blocked by the
user``, 429 with ``parameters.retry_after`` (the library's ``RetryAfter``, no HTTP header),
409 ``Conflict``, 400 for a migrated group, 502 from Telegram's front."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("python-telegram-bot", "fake Telegram Bot API", http_setup, half="heldout4")

TOKEN = "123456789:AAPLANTEDtelegrambottoken0000000000"


def _bot(url: str) -> Any:
    from telegram import Bot
    from telegram.request import HTTPXRequest

    req = HTTPXRequest(connect_timeout=1, read_timeout=1, write_timeout=1, pool_timeout=1)
    return Bot(TOKEN, base_url=url + "/bot", request=req, get_updates_request=req)


def _send(url: str) -> Any:
    async def run() -> Any:
        return await _bot(url).send_message(chat_id=-1001234567890, text="deploy finished")

    return run()


def _updates(url: str) -> Any:
    async def run() -> Any:
        return await _bot(url).get_updates(timeout=0)

    return run()


def _e(code: int, description: str, **parameters: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
    if parameters:
        body["parameters"] = parameters
    return body


SEND: list[Row] = [
    ("unauthorized", 401, _e(401, "Unauthorized"), {}, AUTH, None, "the bot token is revoked"),
    (
        "chat_not_found",
        400,
        _e(400, "Bad Request: chat not found"),
        {},
        NF,
        None,
        "the chat id does not exist (Telegram answers 400)",
    ),
    (
        "blocked",
        403,
        _e(403, "Forbidden: bot was blocked by the user"),
        {},
        AUTH | INT,
        None,
        "the user blocked the bot: a refusal no retry changes",
    ),
    (
        "flood",
        429,
        _e(429, "Too Many Requests: retry after 4", retry_after=4),
        {},
        RL,
        4.0,
        "flood control: the delay is in the body's parameters only",
    ),
    (
        "too_long",
        400,
        _e(400, "Bad Request: message is too long"),
        {},
        INT,
        None,
        "the text is over 4096 characters: it never passes",
    ),
    (
        "migrated",
        400,
        _e(
            400,
            "Bad Request: group chat was upgraded to a supergroup chat",
            migrate_to_chat_id=-1009876543210,
        ),
        {},
        INT | NF,
        None,
        "the group moved to a new id (the pack must use it)",
    ),
    (
        "bad_gateway",
        502,
        _e(502, "Bad Gateway"),
        {},
        NET,
        None,
        "Telegram's front failed",
    ),
]
http_cases(FAM, _send, SEND)
http_cases(
    FAM,
    _updates,
    [
        (
            "conflict",
            409,
            _e(
                409,
                "Conflict: terminated by other getUpdates request; make sure that only one bot "
                "instance is running",
            ),
            {},
            INT,
            None,
            "another instance polls the same bot: not a duplicate object",
        ),
        (
            "webhook_active",
            409,
            _e(
                409,
                "Conflict: can't use getUpdates method while webhook is active; use "
                "deleteWebhook to delete the webhook first",
            ),
            {},
            INT,
            None,
            "the bot is configured for a webhook",
        ),
    ],
    transport=False,
)
