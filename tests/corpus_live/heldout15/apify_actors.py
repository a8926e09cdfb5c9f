"""apify-client (Apify's Python API client, its own HTTP client underneath) against a fake
Apify API v2 answering its documented error bodies (``{"error": {"type", "message"}}``) and
statuses when starting an Actor run: 401 bad token, 403 missing permission, 404 unknown Actor,
400 invalid input, 402 usage and memory limits, 429, 500 and 503; plus the client's own
timeout and the transport failures. The client's retries are turned off."""

from __future__ import annotations

from datetime import timedelta
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

FAM = family("apify", "fake Apify API v2", http_setup, half="heldout15")


def _start(url: str) -> Any:
    from apify_client import ApifyClient

    second = timedelta(seconds=1)
    client = ApifyClient(
        "apify_api_PLANTEDapifytoken",
        api_url=url,
        max_retries=0,
        timeout_short=second,
        timeout_medium=second,
        timeout_long=second,
        timeout_max=second,
    )
    return client.actor("acme~web-scraper").start(
        run_input={"startUrls": [{"url": "https://shop.example/"}]}
    )


def _e(type: str, message: str) -> dict[str, Any]:
    return {"error": {"type": type, "message": message}}


ROWS: list[Row] = [
    (
        "bad_token",
        401,
        _e("user-or-token-not-found", "User was not found or authentication token is not valid"),
        {},
        AUTH,
        None,
        "the API token is not valid",
    ),
    (
        "no_permission",
        403,
        _e(
            "insufficient-permissions",
            "Insufficient permissions for the Actor. Make sure you're passing a correct API token and that it has the required permissions.",
        ),
        {},
        AUTH,
        None,
        "the token may not run this Actor",
    ),
    (
        "actor_not_found",
        404,
        _e("record-not-found", "Actor was not found"),
        {},
        NF,
        None,
        "the Actor does not exist",
    ),
    (
        "invalid_input",
        400,
        _e("invalid-input", "Input is not valid: Field input.startUrls.0.url must be a valid URL"),
        {},
        INT,
        None,
        "the run input does not match the Actor's schema (the caller's input)",
    ),
    (
        "usage_exhausted",
        402,
        _e(
            "not-enough-usage-to-run-paid-actor",
            "You do not have enough usage left to run this paid Actor. Please upgrade your plan or wait for the next billing cycle.",
        ),
        {},
        QUOTA,
        None,
        "the account's monthly usage is used up",
    ),
    (
        "memory_limit",
        402,
        _e(
            "actor-memory-limit-exceeded",
            "By launching this job you will exceed the memory limit of 8192MB for all your Actor runs and builds (currently used: 8192MB, requested: 4096MB). Please consider an upgrade to a paid plan at https://console.apify.com/billing/subscription to increase your Actor memory limit.",
        ),
        {},
        QUOTA | RL,
        None,
        "the account's concurrent memory is taken by other runs",
    ),
    (
        "rate_limited",
        429,
        _e(
            "rate-limit-exceeded",
            "You have exceeded the rate limit of 30 requests per second. Please slow down.",
        ),
        {},
        RL,
        None,
        "over the per-resource rate limit, no delay given",
    ),
    (
        "internal",
        500,
        _e("internal-server-error", "Internal server error"),
        {},
        NET,
        None,
        "Apify failed",
    ),
    (
        "unavailable",
        503,
        _e("server-overloaded", "The server is overloaded, please try again later"),
        {},
        NET | RL,
        None,
        "Apify is overloaded",
    ),
]
http_cases(FAM, _start, ROWS)
