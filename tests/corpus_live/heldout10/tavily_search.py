"""tavily-python (Tavily's web search API for LLM agents, over requests) through
``TavilyClient`` against a fake Tavily API on 127.0.0.1 (``api_base_url``, a 1 s request
timeout). Errors are Tavily's ``{"detail": {"error": ...}}`` bodies, Tavily's own 432 (plan
limit) and 433 (pay-as-you-go limit) statuses, and for keyless callers the
``{"error": {code, message, window, retry_after_seconds, next_actions}}`` envelope. The SDK
raises ``InvalidAPIKeyError``, ``ForbiddenError``, ``BadRequestError``,
``UsageLimitExceededError``, ``TavilyKeylessLimitError``, its own ``TimeoutError`` (from
requests' ``Timeout``), requests' ``HTTPError`` for other statuses and requests' exceptions
from the transport. Faked: the Tavily API; real: the SDK and requests."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    QUOTA,
    RL,
    TO,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("tavily-python", "fake Tavily API", http_setup, half="heldout10")

_KEY = "PLANTEDtvly-dev-8Kq2Wm5Rx9Lp3Zn7Vb4Hc6Jd1Tf"


def _search(url: str, key: str = _KEY) -> Any:
    from tavily import TavilyClient  # type: ignore[import-untyped]

    with TavilyClient(api_key=key, api_base_url=url) as client:
        return client.search("latest PostgreSQL minor release", max_results=5, timeout=1)


def _err(message: str) -> dict[str, Any]:
    return {"detail": {"error": message}}


SEARCH: list[Row] = [
    (
        "bad_key",
        401,
        _err("Unauthorized: missing or invalid API key."),
        {},
        AUTH,
        None,
        "the API key is unknown or was revoked",
    ),
    (
        "throttled",
        429,
        _err(
            "Your request has been blocked due to excessive requests. Please reduce rate of "
            "requests."
        ),
        {},
        RL,
        None,
        "the key's request rate is exceeded",
    ),
    (
        "plan_limit",
        432,
        _err(
            "This request exceeds your plan's set usage limit. Please upgrade your plan or "
            "contact support@tavily.com"
        ),
        {},
        QUOTA,
        None,
        "the plan's monthly credits are used up",
    ),
    (
        "payg_limit",
        433,
        _err(
            "This request exceeds the pay-as-you-go limit. You can increase your limit on the "
            "Tavily dashboard."
        ),
        {},
        QUOTA,
        None,
        "the account's pay-as-you-go spending cap is reached",
    ),
    (
        "query_too_long",
        400,
        _err("Query is too long. Max query length is 400 characters."),
        {},
        INT,
        None,
        "the query is invalid (the pack's input)",
    ),
    (
        "server_error",
        500,
        _err("Internal Server Error"),
        {},
        NET,
        None,
        "Tavily failed",
    ),
    (
        "gateway_timeout",
        504,
        {"message": "Endpoint request timed out"},
        {"x-amzn-ErrorType": "InternalServerErrorException"},
        TO,
        None,
        "the API gateway gave up waiting for Tavily's backend",
    ),
]
http_cases(FAM, _search, SEARCH)

KEYLESS: list[Row] = [
    (
        "keyless_limit",
        429,
        {
            "error": {
                "code": "keyless_rate_limited",
                "message": "Keyless request limit reached. Create a free API key to continue.",
                "window": "hour",
                "retry_after_seconds": 1800,
                "next_actions": [{"type": "signup", "url": "https://app.tavily.com"}],
            }
        },
        {},
        RL | AUTH,
        1800.0,
        "no API key configured: the keyless allowance for the hour is used up",
    ),
]
http_cases(FAM, lambda url: _search(url, key=""), KEYLESS, transport=False)


def _crawl_keyless(ctx: Http) -> Any:
    from tavily import TavilyClient

    with TavilyClient(api_key="", api_base_url=ctx.http.url) as client:
        return client.crawl("https://www.postgresql.org/docs/", max_depth=1, timeout=1)


FAM.add(
    "keyless_crawl",
    AUTH | INT,
    "no API key configured: the SDK refuses an endpoint that needs one",
    _crawl_keyless,
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: _search(f"http://127.0.0.1:{c.net.garbage}"),
)
