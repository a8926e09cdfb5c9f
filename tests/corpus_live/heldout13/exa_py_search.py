"""exa-py (Exa's search SDK, its sync ``Exa`` client over requests, a 1 s timeout) against a
fake Exa API on 127.0.0.1 (``base_url`` pointed at it). Exa answers every error as JSON
``{"requestId", "error", "tag"}`` with the status and tags of its error-code reference: 401
``INVALID_API_KEY``; 402 ``NO_MORE_CREDITS`` or ``API_KEY_BUDGET_EXCEEDED``; 403
``ACCESS_DENIED``; 400 ``INVALID_REQUEST_BODY``/``NUM_RESULTS_EXCEEDED``; 429
``RATE_LIMIT_EXCEEDED``; 500 ``INTERNAL_ERROR``. The SDK raises a plain ``ValueError`` holding
the status and the body for any error status; requests' errors (a timeout re-typed as its
``ExaTimeoutError``) for the transport. Faked: the API; real: the SDK and requests."""

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

FAM = family("exa-py", "fake Exa API", http_setup, half="heldout13")


def _exa(url: str) -> Any:
    from exa_py import Exa

    return Exa(
        api_key="PLANTED-exa-7c2e9b41-d5a8-4f36-b0e1-3a9c6d2f8e47", base_url=url, timeout=1.0
    )


def _search(url: str) -> Any:
    return _exa(url).search("postgres logical replication lag causes", num_results=10)


def _contents(url: str) -> Any:
    return _exa(url).get_contents(
        ["https://www.postgresql.org/docs/current/logical-replication.html"], text=True
    )


def _err(message: str, tag: str) -> dict[str, str]:
    return {"requestId": "b3f1c8e2a7d94e06a5c1f2e3d4b5a697", "error": message, "tag": tag}


SEARCH: list[Row] = [
    (
        "bad_key",
        401,
        _err("Invalid API key", "INVALID_API_KEY"),
        {},
        AUTH,
        None,
        "the API key is wrong or was deleted",
    ),
    (
        "no_credits",
        402,
        _err(
            "You have run out of credits. Add credits at https://dashboard.exa.ai/billing to"
            " continue.",
            "NO_MORE_CREDITS",
        ),
        {},
        QUOTA,
        None,
        "the account's credit balance is spent",
    ),
    (
        "key_budget",
        402,
        _err(
            "This API key has exceeded its spending limit. Raise the limit at"
            " https://dashboard.exa.ai/api-keys.",
            "API_KEY_BUDGET_EXCEEDED",
        ),
        {},
        QUOTA,
        None,
        "the key's own spending limit is reached",
    ),
    (
        "access_denied",
        403,
        _err("Your plan does not include access to this endpoint.", "ACCESS_DENIED"),
        {},
        AUTH,
        None,
        "the account's plan does not grant the endpoint",
    ),
    (
        "bad_body",
        400,
        _err(
            "Invalid request body: numResults: Number must be less than or equal to 100",
            "INVALID_REQUEST_BODY",
        ),
        {},
        INT,
        None,
        "the caller's search parameters fail validation",
    ),
    (
        "too_many_results",
        400,
        _err(
            "numResults 10 exceeds the maximum of 5 allowed on your plan.",
            "NUM_RESULTS_EXCEEDED",
        ),
        {},
        INT | QUOTA,
        None,
        "the caller asked more results than the plan allows",
    ),
    (
        "rate_limited",
        429,
        _err(
            "You've exceeded your rate limit of 5 requests per second. Please slow down.",
            "RATE_LIMIT_EXCEEDED",
        ),
        {},
        RL,
        None,
        "the key's queries-per-second limit, no delay given",
    ),
    (
        "internal",
        500,
        _err("An internal error occurred. Please try again later.", "INTERNAL_ERROR"),
        {},
        NET,
        None,
        "Exa failed while serving the search",
    ),
]
http_cases(FAM, _search, SEARCH)

CONTENTS: list[Row] = [
    (
        "crawl_failed",
        400,
        _err(
            "No content found for the provided URLs.",
            "NO_CONTENT_FOUND",
        ),
        {},
        NF | INT,
        None,
        "Exa has no content for the page the caller named",
    ),
]
http_cases(FAM, _contents, CONTENTS, transport=False)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: _search(f"http://127.0.0.1:{c.net.garbage}"),
)
