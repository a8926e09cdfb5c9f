"""ably (Ably's pub/sub SDK, its REST client) publishing to a channel against a fake Ably REST
API answering its documented error bodies (``{"error": {"message": ..., "code": 40160,
"statusCode": 401, "href": ...}}``): Ably's five-digit codes, whose first three digits are the
HTTP status and whose last two say what happened."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("ably", "fake Ably REST API", http_setup, half="heldout3")


def _client(url: str) -> Any:
    from ably import AblyRest

    host, _, port = url.removeprefix("http://").partition(":")
    return AblyRest(
        token="PLANTED-ably-token-0000000000",
        rest_host=host,
        port=int(port or 80),
        tls=False,
        use_binary_protocol=False,
        fallback_hosts=[],
        http_max_retry_count=1,  # the attempts in all (0 makes none)
        http_request_timeout=1000,
        http_open_timeout=1000,
    )


async def _publish_async(url: str) -> Any:
    client = _client(url)
    try:
        return await client.channels.get("orders").publish("created", {"id": 1})
    finally:
        await client.close()


async def _device_async(url: str) -> Any:
    client = _client(url)
    try:
        return await client.push.admin.device_registrations.get("device-0001")
    finally:
        await client.close()


def _publish(url: str) -> Any:
    return _publish_async(url)


def _device(url: str) -> Any:
    return _device_async(url)


def _e(code: int, status: int, message: str) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "code": code,
            "statusCode": status,
            "href": f"https://help.ably.io/error/{code}",
        }
    }


PUBLISH: list[Row] = [
    (
        "invalid_credentials",
        401,
        _e(40101, 401, "Invalid credentials; key = PLANTED.appkey"),
        {},
        AUTH,
        None,
        "40101: the credentials are invalid",
    ),
    (
        "not_permitted",
        401,
        _e(
            40160,
            401,
            "Unable to perform channel operation (permission denied); channel = orders, "
            'operation = publish, capability = {"orders":["subscribe"]}',
        ),
        {},
        AUTH,
        None,
        "40160: the key's capability does not allow publish on this channel",
    ),
    (
        "token_expired",
        401,
        _e(40142, 401, "Key/token status changed (expire)"),
        {},
        AUTH,
        None,
        "40142: the token has expired",
    ),
    (
        "rate_limited",
        429,
        _e(42910, 429, "Rate limit exceeded; request rejected (nonfatal)"),
        {},
        RL,
        None,
        "42910: the account's rate limit",
    ),
    (
        "bad_request",
        400,
        _e(40000, 400, "Invalid message; name field must be a string"),
        {},
        INT,
        None,
        "40000: the message is invalid (the pack's input)",
    ),
    (
        "internal",
        500,
        _e(50000, 500, "Internal error"),
        {},
        NET,
        None,
        "50000: Ably failed",
    ),
]
http_cases(FAM, _publish, PUBLISH, transport=False)
# Transport failures, but not a silent server: the REST client's request timeouts do not bound
# a connection that is accepted and never answered (the case would hang).
FAM.add("refused", NET, "nothing listens", lambda c: _publish(f"http://127.0.0.1:{c.net.closed}"))
FAM.add("dns", NET, "host does not resolve", lambda c: _publish("http://no-such-host.invalid:80"))
FAM.add("dropped", NET, "closed at once", lambda c: _publish(f"http://127.0.0.1:{c.net.close_now}"))
http_cases(
    FAM,
    _device,
    [
        (
            "device_not_found",
            404,
            _e(40400, 404, "Not found"),
            {},
            NF,
            None,
            "40400: the push device is not registered",
        )
    ],
    transport=False,
)
