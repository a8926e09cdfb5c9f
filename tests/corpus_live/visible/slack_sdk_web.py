"""slack_sdk's WebClient against a fake Slack Web API (HTTP 200 with ok:false codes)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family("slack_sdk", "fake Slack Web API (ok:false error codes)", http_setup, half="visible")


def _call(url: str) -> Any:
    from slack_sdk import WebClient

    client = WebClient(token="xoxb-PLANTED", base_url=url + "/api/", timeout=1, retry_handlers=[])
    return client.chat_postMessage(channel="C0123", text="hi")


def _nok(error: str, **extra: Any) -> dict[str, Any]:
    return {"ok": False, "error": error, **extra}


ROWS: list[Row] = [
    ("invalid_auth", 200, _nok("invalid_auth"), {}, AUTH, None, "token invalid"),
    ("not_authed", 200, _nok("not_authed"), {}, AUTH, None, "no token"),
    ("token_revoked", 200, _nok("token_revoked"), {}, AUTH, None, "token revoked"),
    (
        "account_inactive",
        200,
        _nok("account_inactive"),
        {},
        AUTH,
        None,
        "token's account deactivated",
    ),
    (
        "missing_scope",
        200,
        _nok("missing_scope", needed="chat:write", provided="channels:read"),
        {},
        AUTH,
        None,
        "token lacks scope",
    ),
    ("not_in_channel", 200, _nok("not_in_channel"), {}, AUTH, None, "bot is not in the channel"),
    ("channel_not_found", 200, _nok("channel_not_found"), {}, NF, None, "no such channel"),
    ("user_not_found", 200, _nok("user_not_found"), {}, NF, None, "no such user"),
    (
        "ratelimited",
        429,
        _nok("ratelimited"),
        {"Retry-After": "30"},
        RL,
        30.0,
        "Tier rate limit with Retry-After",
    ),
    (
        "msg_too_long",
        200,
        _nok("msg_too_long"),
        {},
        INT,
        None,
        "message too long: the pack's input",
    ),
    ("invalid_arguments", 200, _nok("invalid_arguments"), {}, INT, None, "bad arguments"),
    ("is_archived", 200, _nok("is_archived"), {}, INT | AUTH, None, "channel archived"),
    ("internal_error", 200, _nok("internal_error"), {}, NET | INT, None, "Slack's own failure"),
    ("service_unavailable", 503, _nok("service_unavailable"), {}, NET, None, "Slack unavailable"),
    ("fatal_error", 500, _nok("fatal_error"), {}, NET, None, "Slack's server failed"),
    (
        "request_timeout",
        200,
        _nok("request_timeout"),
        {},
        TO,
        None,
        "Slack says the request timed out",
    ),
]
http_cases(FAM, _call, ROWS)
