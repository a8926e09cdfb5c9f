"""trycourier (Courier's notification API, a Stainless client on httpx): its async client
``AsyncCourier`` sends a message against a fake Courier API on 127.0.0.1 answering the
errors Courier sends (``{"message": ..., "type": ...}`` bodies) with their statuses and
headers: a wrong key, a key of another environment, an unknown template or brand, a reused
idempotency key, the caller's bad input, a body too large, rate limits, server errors and a
proxy's page; plus the client's own timeout and the transport failures. The client's
retries are off (``max_retries=0``), so each call is tried once; every case runs on an
event loop of its own."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    RL,
    TO,
    Row,
    family,
    http_cases,
    http_setup,
    run_async,
)

FAM = family("trycourier", "fake Courier API", http_setup, half="heldout19")


async def _send_async(url: str) -> Any:
    from courier import AsyncCourier

    client = AsyncCourier(api_key="pk_prod_PLANTED7KQ2M9", base_url=url, max_retries=0, timeout=1)
    async with client:
        return await client.send.message(
            message={
                "to": {"email": "jo.bloggs@example.com"},
                "template": "ORDER_SHIPPED",
                "data": {"order_id": "A-99812"},
            }
        )


def _send(url: str) -> Any:
    return run_async(_send_async(url))


def _e(message: str, type: str) -> dict[str, Any]:
    return {"message": message, "type": type}


ROWS: list[Row] = [
    (
        "unauthorized",
        401,
        _e("Unauthorized", "authorization_error"),
        {},
        AUTH,
        None,
        "the API key is wrong",
    ),
    (
        "forbidden",
        403,
        _e("Forbidden", "authorization_error"),
        {},
        AUTH,
        None,
        "the key may not use this endpoint",
    ),
    (
        "template_not_found",
        404,
        _e("Notification template ORDER_SHIPPED not found", "invalid_request_error"),
        {},
        NF,
        None,
        "the message names a template that does not exist",
    ),
    (
        "idempotency_conflict",
        409,
        _e(
            "Idempotency-Key has already been used with a different request body",
            "invalid_request_error",
        ),
        {},
        EXISTS | INT,
        None,
        "the idempotency key was already used for another request",
    ),
    (
        "bad_request",
        400,
        _e("message.to: Expected an object or an array of objects", "invalid_request_error"),
        {},
        INT,
        None,
        "the message is malformed (the caller's input)",
    ),
    (
        "too_large",
        413,
        _e("Request Entity Too Large", "invalid_request_error"),
        {},
        INT,
        None,
        "the request body is over the size limit (the caller's input)",
    ),
    (
        "unprocessable",
        422,
        _e("Invalid email address: jo.bloggs@example", "invalid_request_error"),
        {},
        INT,
        None,
        "a value of the message is refused (the caller's input)",
    ),
    (
        "rate_limited",
        429,
        _e("Too Many Requests", "rate_limit_error"),
        {"Retry-After": "1"},
        RL,
        1.0,
        "too many sends, the server says when to retry",
    ),
    (
        "internal",
        500,
        _e("Internal Server Error", "api_error"),
        {},
        NET,
        None,
        "the API failed",
    ),
    (
        "gateway_timeout",
        504,
        {"message": "Endpoint request timed out"},
        {"x-amzn-ErrorType": "InternalServerErrorException"},
        NET | TO,
        None,
        "the API gateway's backend did not answer in time",
    ),
]
http_cases(FAM, _send, ROWS)
