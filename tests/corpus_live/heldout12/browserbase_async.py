"""browserbase (Browserbase's Stainless-generated SDK, its async client ``AsyncBrowserbase``
over httpx) against a fake Browserbase API v1 on 127.0.0.1 (``base_url`` pointed at it,
``max_retries=0`` so each request is sent once, a 1 s timeout). Browserbase's API answers
errors as Fastify does: ``{statusCode, error, message}`` (schema validation adds ``code``:
``FST_ERR_VALIDATION``); 402 when the plan's browser minutes are spent, 429 when the
project's concurrent sessions are all running. The client raises one ``APIStatusError``
subclass per status, ``APIConnectionError``/``APITimeoutError`` for the transport. Faked: the
API; real: the client and httpx."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
    run_async,
)

FAM = family("browserbase", "fake Browserbase API", http_setup, half="heldout12")

_PROJECT = "c4e1f2a9-7b3d-4e58-9a06-1d2f3b4c5e6f"
_SESSION = "f81d4fae-7dec-41d0-a765-00a0c91e6bf6"


def _client(url: str) -> Any:
    from browserbase import AsyncBrowserbase

    return AsyncBrowserbase(
        api_key="bb_live_PLANTED9kQ2mX7vT4nR8sW1", base_url=url, max_retries=0, timeout=1.0
    )


async def _create(url: str) -> Any:
    async with _client(url) as bb:
        return await bb.sessions.create(project_id=_PROJECT, region="us-west-2")


async def _release(url: str) -> Any:
    async with _client(url) as bb:
        return await bb.sessions.update(_SESSION, status="REQUEST_RELEASE", project_id=_PROJECT)


def _fastify(status: int, error: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"statusCode": status, **extra, "error": error, "message": message}


CREATE: list[Row] = [
    (
        "bad_key",
        401,
        _fastify(401, "Unauthorized", "Unauthorized"),
        {},
        AUTH,
        None,
        "the API key is wrong or revoked",
    ),
    (
        "other_org_project",
        403,
        _fastify(403, "Forbidden", "You do not have access to this project"),
        {},
        AUTH,
        None,
        "the key's organization does not own the project",
    ),
    (
        "project_not_found",
        404,
        _fastify(404, "Not Found", "Project not found"),
        {},
        NF,
        None,
        "the project id does not exist",
    ),
    (
        "minutes_spent",
        402,
        _fastify(
            402,
            "Payment Required",
            "Free plan browser minutes limit reached. Please upgrade your account at"
            " https://browserbase.com/plans",
        ),
        {},
        QUOTA,
        None,
        "the plan's browser minutes are used up",
    ),
    (
        "concurrency",
        429,
        _fastify(
            429,
            "Too Many Requests",
            "You've exceeded your max concurrent sessions limit (limit 3, currently 3)",
        ),
        {},
        RL | QUOTA,
        None,
        "every concurrent session of the plan is running, no delay given",
    ),
    (
        "validation",
        400,
        _fastify(
            400,
            "Bad Request",
            "body/browserSettings/viewport/width must be >= 1",
            code="FST_ERR_VALIDATION",
        ),
        {},
        INT,
        None,
        "the caller's session settings fail the schema",
    ),
    (
        "internal",
        500,
        _fastify(500, "Internal Server Error", "An internal server error occurred"),
        {},
        NET,
        None,
        "Browserbase failed to start the browser",
    ),
]
http_cases(FAM, lambda url: run_async(_create(url)), CREATE)

RELEASE: list[Row] = [
    (
        "session_not_found",
        404,
        _fastify(404, "Not Found", "Session not found"),
        {},
        NF,
        None,
        "no session with this id",
    ),
]
http_cases(FAM, lambda url: run_async(_release(url)), RELEASE, transport=False)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: run_async(_create(f"http://127.0.0.1:{c.net.garbage}")),
)
