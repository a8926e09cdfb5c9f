"""todoist-api-python (Doist's official SDK for the Todoist API v1, over httpx), its ASYNC
client ``TodoistAPIAsync``, against a fake Todoist API on 127.0.0.1. The SDK has no base-URL
option (it always calls ``https://api.todoist.com/api/v1/...``) and fixes its own timeouts
(60 s read), so the pack hands it an ``httpx.AsyncClient`` whose transport routes those
requests to the fake's address, and bounds each call with its own deadline
(``asyncio.wait_for``, 1 s): a silent server ends in the pack's ``TimeoutError``. Errors are
Todoist's error envelope ``{"error", "error_code", "error_extra", "error_tag",
"http_code"}`` (``AUTH_INVALID_TOKEN``, ``FORBIDDEN``, ``NOT_FOUND``,
``INVALID_ARGUMENT_VALUE``, ``MAX_PROJECTS_LIMIT_REACHED``, ``TOO_MANY_REQUESTS`` with the wait
in ``error_extra.retry_after``, seconds); the numeric ``error_code`` values are illustrative.
The SDK calls ``raise_for_status()``: every status comes out as ``httpx.HTTPStatusError``
with the response (and its body) attached; the transport raises httpx's exceptions."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, QUOTA, RL, Row, family, http_cases, http_setup

FAM = family(
    "todoist-api-python", "fake Todoist API v1 (async client)", http_setup, half="heldout7"
)

_TOKEN = "PLANTED0a1b2c3d4e5f60718293a4b5c6d7e8f9012"


def _routed(base: str) -> Any:
    import httpx

    class Route(httpx.AsyncBaseTransport):
        """Sends what the SDK addresses to api.todoist.com to ``base`` instead."""

        def __init__(self) -> None:
            self.inner = httpx.AsyncHTTPTransport()

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            request.url = httpx.URL(base + request.url.raw_path.decode())
            return await self.inner.handle_async_request(request)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return httpx.AsyncClient(transport=Route())


async def _within_deadline(url: str, op: Callable[[Any], Awaitable[Any]]) -> Any:
    from todoist_api_python.api_async import TodoistAPIAsync

    async with TodoistAPIAsync(_TOKEN, client=_routed(url)) as api:
        return await asyncio.wait_for(op(api), 1.0)


def _get_task(url: str) -> Any:
    return _within_deadline(url, lambda api: api.get_task("6X7rM8997g3RQmvh"))


def _add_project(url: str) -> Any:
    return _within_deadline(url, lambda api: api.add_project("Q3 launch", color="berry_red"))


def _err(tag: str, message: str, status: int, code: int, **extra: Any) -> dict[str, Any]:
    return {
        "error": message,
        "error_code": code,
        "error_extra": {"event_id": "b1f3c0e26a7d4a5e9f0c1d2e3f4a5b6c", **extra},
        "error_tag": tag,
        "http_code": status,
    }


GET: list[Row] = [
    (
        "invalid_token",
        401,
        _err("AUTH_INVALID_TOKEN", "Invalid token", 401, 401),
        {},
        AUTH,
        None,
        "the API token is wrong or was revoked",
    ),
    (
        "forbidden",
        403,
        _err("FORBIDDEN", "Forbidden", 403, 403),
        {},
        AUTH,
        None,
        "the task belongs to a project the user may not see",
    ),
    (
        "not_found",
        404,
        _err("NOT_FOUND", "Task not found", 404, 478),
        {},
        NF,
        None,
        "no task with that id (deleted, or another user's)",
    ),
    (
        "too_many_requests",
        429,
        _err("TOO_MANY_REQUESTS", "Too many requests", 429, 35, retry_after=5),
        {},
        RL,
        5.0,
        "the user's request budget, the wait in error_extra.retry_after",
    ),
    (
        "service_unavailable",
        503,
        _err("SERVICE_UNAVAILABLE", "Service unavailable", 503, 503),
        {},
        NET,
        None,
        "Todoist is unavailable",
    ),
]
http_cases(FAM, _get_task, GET, transport=False)

ADD: list[Row] = [
    (
        "invalid_argument",
        400,
        _err("INVALID_ARGUMENT_VALUE", "Invalid argument value", 400, 20, argument="color"),
        {},
        INT,
        None,
        "an argument the API rejects (the pack's input)",
    ),
    (
        "projects_limit",
        403,
        _err(
            "MAX_PROJECTS_LIMIT_REACHED",
            "Maximum number of projects per user limit reached",
            403,
            47,
        ),
        {},
        QUOTA,
        None,
        "the plan's project limit is reached",
    ),
    (
        "internal",
        500,
        _err("INTERNAL_SERVER_ERROR", "Internal server error", 500, 500),
        {},
        NET,
        None,
        "Todoist failed",
    ),
]
http_cases(FAM, _add_project, ADD)
