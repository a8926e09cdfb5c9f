"""knockapi (Knock's Stainless-generated SDK, its async ``AsyncKnock`` client over httpx)
against a fake Knock API (``/v1``) on 127.0.0.1 (``base_url`` pointed at it,
``max_retries=0`` so each request is sent once, a 1 s timeout). Knock answers every error as
``application/json`` in its shared shape ``{code, message, status, type}``; a path it does
not route answers Phoenix's ``{"errors": {"detail": "404 Not Found"}}``. The client raises one
``APIStatusError`` subclass per status, ``APIConnectionError``/``APITimeoutError`` for the
transport. Faked: the API (shapes from Knock's API reference, "Errors"); real: the client and
httpx."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
    run_async,
)

FAM = family("knockapi", "fake Knock API", http_setup, half="heldout14")

_H = {"x-request-id": "F-Lm2q8xYb3RkAAAB9fC", "server": "Cowboy"}


def _client(url: str) -> Any:
    from knockapi import AsyncKnock

    return AsyncKnock(
        api_key="sk_test_PLANTED_5vQ9hX2mT7cL1wR4",
        base_url=url,
        max_retries=0,
        timeout=1.0,
    )


async def _trigger(url: str) -> Any:
    async with _client(url) as knock:
        return await knock.workflows.trigger(
            "order-shipped",
            recipients=["user_8f2a"],
            data={"order_id": "ord_1042"},
        )


async def _get_user(url: str) -> Any:
    async with _client(url) as knock:
        return await knock.users.get("user_8f2a")


def _e(status: int, code: str, type: str, message: str) -> dict[str, Any]:
    return {"code": code, "message": message, "status": status, "type": type}


TRIGGER: list[Row] = [
    (
        "key_missing",
        401,
        _e(401, "api_key_missing", "authentication_error", "No valid API key provided"),
        _H,
        AUTH,
        None,
        "the secret key is not one Knock knows",
    ),
    (
        "public_key",
        401,
        _e(
            401,
            "invalid_api_key",
            "authentication_error",
            "This endpoint requires a secret API key. Publishable keys are not allowed.",
        ),
        _H,
        AUTH,
        None,
        "a publishable key was used where a secret key is needed",
    ),
    (
        "workflow_missing",
        404,
        _e(404, "resource_missing", "api_error", "The resource you requested does not exist"),
        _H,
        NF,
        None,
        "no workflow with that key in this environment",
    ),
    (
        "invalid_params",
        422,
        _e(
            422,
            "invalid_params",
            "invalid_request_error",
            "recipients: each recipient must be a user id string or a recipient object",
        ),
        _H,
        INT,
        None,
        "the caller's trigger payload fails validation",
    ),
    (
        "rate_limited",
        429,
        _e(429, "rate_limit_exceeded", "api_error", "Rate limit exceeded"),
        dict(_H, **{"retry-after": "7"}),
        RL,
        7.0,
        "the per-key trigger rate limit, a wait given",
    ),
    (
        "server_error",
        500,
        _e(500, "internal_error", "api_error", "Internal server error"),
        _H,
        NET,
        None,
        "Knock failed while serving the request",
    ),
    (
        "unavailable",
        503,
        "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle"
        " this request.\n</body></html>\n",
        {"cache-control": "no-cache"},
        NET,
        None,
        "the load balancer has no backend to send the request to",
    ),
]
http_cases(FAM, lambda url: run_async(_trigger(url)), TRIGGER)

GET: list[Row] = [
    (
        "unrouted",
        404,
        {"errors": {"detail": "404 Not Found"}},
        _H,
        NF | INT,
        None,
        "the API does not route the path asked for",
    ),
    (
        "user_missing",
        404,
        _e(404, "resource_missing", "api_error", "The resource you requested does not exist"),
        _H,
        NF,
        None,
        "no user with that id",
    ),
]
http_cases(FAM, lambda url: run_async(_get_user(url)), GET, transport=False)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: run_async(_get_user(f"http://127.0.0.1:{c.net.garbage}")),
)
