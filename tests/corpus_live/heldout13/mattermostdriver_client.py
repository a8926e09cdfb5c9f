"""mattermostdriver (the Mattermost API v4 driver over requests) against a fake Mattermost
server on 127.0.0.1 (``scheme=http``, ``request_timeout=1``). Mattermost answers every error as its
``AppError`` JSON (``id``, ``message``, ``detailed_error``, ``request_id``, ``status_code``)
with ``X-Request-Id`` and ``X-Version-Id``; an existing team or channel is a 400 whose id says
``exists``; its rate limiter answers 429 ``limit exceeded`` as text with ``X-Ratelimit-*``
and ``Retry-After``. The driver raises one ``requests.HTTPError`` subclass per status
(``NoAccessTokenProvided``, ``NotEnoughPermissions``, ``ResourceNotFound``, ``FeatureDisabled``
...) or the plain ``HTTPError``; requests' own errors for the transport. Faked: the server;
real: the driver and requests."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

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

FAM = family("mattermostdriver", "fake Mattermost server", http_setup, half="heldout13")

_H = {
    "X-Request-Id": "p8xq7mcz3bfwzjyk1o6n4sa9te",
    "X-Version-Id": "10.5.0.13554853127.5d1c8b4e0f3a2e4a6b9c7d1e2f3a4b5c.true",
}
_TEAM = "rdc9bgriktyx9p4kowh3dmgqyc"
_ME = "4xp9fdt77pncbef59f4k1qe83o"


def _driver(url: str, token: str = "") -> Any:
    from mattermostdriver import Driver  # type: ignore[import-untyped]

    parts = urlsplit(url)
    return Driver(
        {
            "scheme": "http",
            "url": parts.hostname,
            "port": parts.port or 80,
            "request_timeout": 1,
            "token": token,
            "login_id": "build-bot",
            "password": "PLANTED-pass-7f3a9c",
        }
    )


def _login(url: str) -> Any:
    return _driver(url).login()


def _token_login(url: str) -> Any:
    return _driver(url, "PLANTEDtok9fq3mzx8wbe1kc7jqy4u").login()


def _authed(url: str) -> Any:
    d = _driver(url)
    d.client.token = "PLANTEDtok9fq3mzx8wbe1kc7jqy4u"
    return d


def _post(url: str) -> Any:
    return _authed(url).posts.create_post(
        {"channel_id": "ooty8ahxcjbqmjzeq5hzgk1nay", "message": "deploy finished"}
    )


def _find_channel(url: str) -> Any:
    return _authed(url).channels.get_channel_by_name(_TEAM, "release-notes")


def _create_channel(url: str) -> Any:
    return _authed(url).channels.create_channel(
        {"team_id": _TEAM, "name": "release-notes", "display_name": "Release notes", "type": "O"}
    )


def _new_token(url: str) -> Any:
    return _authed(url).users.create_user_access_token(_ME, {"description": "ci"})


def _app(status: int, id: str, message: str, where: str = "") -> dict[str, Any]:
    return {
        "id": id,
        "message": message,
        "detailed_error": where,
        "request_id": "p8xq7mcz3bfwzjyk1o6n4sa9te",
        "status_code": status,
    }


http_cases(
    FAM,
    _login,
    [
        (
            "bad_password",
            401,
            _app(
                401,
                "api.user.login.invalid_credentials_email_username",
                "Enter a valid email or username and/or password.",
            ),
            _H,
            AUTH,
            None,
            "the login id or password is wrong",
        ),
        (
            "account_locked",
            401,
            _app(
                401,
                "api.user.check_user_login_attempts.too_many.app_error",
                "Your account is locked because of too many failed password attempts. Please"
                " reset your password.",
            ),
            _H,
            AUTH,
            None,
            "too many failed logins locked the account",
        ),
    ],
)

http_cases(
    FAM,
    _token_login,
    [
        (
            "session_expired",
            401,
            _app(
                401,
                "api.context.session_expired.app_error",
                "Invalid or expired session, please login again.",
                "token=PLANTEDtok9fq3mzx8wbe1kc7jqy4u",
            ),
            _H,
            AUTH,
            None,
            "the personal access token was revoked",
        ),
    ],
    transport=False,
)

POST: list[Row] = [
    (
        "no_permission",
        403,
        _app(
            403,
            "api.context.permissions.app_error",
            "You do not have the appropriate permissions.",
            "userId=4xp9fdt77pncbef59f4k1qe83o, permission=create_post",
        ),
        _H,
        AUTH,
        None,
        "the bot is not a member allowed to post in the channel",
    ),
    (
        "invalid_post",
        400,
        _app(
            400,
            "api.context.invalid_body_param.app_error",
            "Invalid or missing post in request body.",
        ),
        _H,
        INT,
        None,
        "the caller's post body is malformed",
    ),
    (
        "rate_limited",
        429,
        "limit exceeded\n",
        {
            **_H,
            "X-Content-Type-Options": "nosniff",
            "X-Ratelimit-Limit": "10",
            "X-Ratelimit-Remaining": "0",
            "X-Ratelimit-Reset": "1",
            "Retry-After": "1",
        },
        RL,
        1.0,
        "the server's API rate limiter throttled the bot, with its delay",
    ),
    (
        "save_failed",
        500,
        _app(
            500,
            "app.post.save.app_error",
            "Unable to save the Post.",
            "failed to save Post: dial tcp 10.0.4.12:5432: connect: connection refused",
        ),
        _H,
        NET,
        None,
        "Mattermost could not reach its database",
    ),
]

http_cases(FAM, _post, POST[:2], transport=False)
http_cases(FAM, _post, POST[2:3], content_type="text/plain; charset=utf-8", transport=False)
http_cases(FAM, _post, POST[3:], transport=False)

http_cases(
    FAM,
    _find_channel,
    [
        (
            "channel_missing",
            404,
            _app(
                404,
                "app.channel.get_by_name.missing.app_error",
                "Channel does not exist.",
                "teamId=rdc9bgriktyx9p4kowh3dmgqyc, name=release-notes: sql: no rows in result set",
            ),
            _H,
            NF,
            None,
            "no channel of that name in the team",
        ),
    ],
    transport=False,
)

http_cases(
    FAM,
    _create_channel,
    [
        (
            "channel_exists",
            400,
            _app(
                400,
                "store.sql_channel.save_channel.exists.app_error",
                "A channel with that name already exists on the same team.",
                "id=ooty8ahxcjbqmjzeq5hzgk1nay",
            ),
            _H,
            EXISTS,
            None,
            "the team has a channel of that name already",
        ),
    ],
    transport=False,
)

http_cases(
    FAM,
    _new_token,
    [
        (
            "tokens_disabled",
            501,
            _app(
                501,
                "api.user.create_user_access_token.disabled",
                "Personal access tokens are disabled on this server. Please contact your system"
                " administrator for details.",
            ),
            _H,
            INT,
            None,
            "the administrator turned personal access tokens off",
        ),
    ],
    transport=False,
)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: _login(f"http://127.0.0.1:{c.net.garbage}"),
)
