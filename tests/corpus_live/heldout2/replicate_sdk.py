"""replicate (the Python client) against a fake Replicate HTTP API answering its problem
details (RFC 7807: ``{"title", "detail", "status"}``)."""

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
)

FAM = family("replicate", "fake Replicate API (problem details)", http_setup, half="heldout2")

VERSION = "5c7d5dc6dd8bf75c1acaa8565735e7986bc5b66206b55cca93cb72c9bf15ccaa"


def _call(url: str) -> Any:
    import httpx
    import replicate

    client = replicate.Client("r8_PLANTED", base_url=url, timeout=httpx.Timeout(1.0))
    # wait=1: the sync API (Prefer: wait=1); its read deadline is 1.5 s (without wait the
    # client passes timeout=None for this call: no deadline at all)
    return client.predictions.create(version=VERSION, input={"prompt": "a lamp"}, wait=1)


def _p(status: int, title: str | None, detail: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"detail": detail, "status": status, **extra}
    if title:
        body["title"] = title
    return body


ROWS: list[Row] = [
    (
        "unauthenticated",
        401,
        _p(401, "Unauthenticated", "You did not pass a valid authentication token"),
        {},
        AUTH,
        None,
        "the API token is invalid",
    ),
    (
        "insufficient_credit",
        402,
        _p(
            402,
            "Insufficient credit",
            "You have insufficient credit to run this model. Go to "
            "https://replicate.com/account/billing#billing to purchase credit. Once you "
            "purchase credit, please wait a few minutes before trying again.",
        ),
        {},
        QUOTA,
        None,
        "no credit: someone must buy some (its text says 'wait a few minutes' after buying)",
    ),
    (
        "not_found",
        404,
        _p(404, None, "Not found."),
        {},
        NF,
        None,
        "the model or version does not exist",
    ),
    (
        "invalid_version",
        422,
        _p(
            422,
            "Invalid version or not permitted",
            "The specified version does not exist (or perhaps you don't have permission to "
            "use it?)",
        ),
        {},
        NF | AUTH | INT,
        None,
        "Replicate's own words leave it open: missing or not permitted, never retryable",
    ),
    (
        "invalid_input",
        422,
        _p(
            422,
            "Input validation failed",
            "- input.prompt: Invalid type. Expected: string, given: integer\n",
            invalid_fields=[
                {
                    "type": "invalid_type",
                    "field": "input.prompt",
                    "description": "Invalid type. Expected: string, given: integer",
                }
            ],
        ),
        {},
        INT,
        None,
        "the input breaks the model's schema: the pack's bug",
    ),
    (
        "throttled",
        429,
        _p(429, "Request was throttled", "Request was throttled. Expected available in 2 seconds."),
        {},
        RL,
        None,
        "throttled; the delay is only in the detail's prose",
    ),
    (
        "server_error",
        500,
        _p(500, "Internal server error", "An unexpected error occurred"),
        {},
        NET,
        None,
        "Replicate failed (5xx)",
    ),
]
http_cases(FAM, _call, ROWS)
