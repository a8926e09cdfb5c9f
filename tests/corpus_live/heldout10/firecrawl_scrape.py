"""firecrawl-py (Firecrawl's web scraping API that turns sites into LLM-ready markdown, v2
client over requests) through ``Firecrawl`` against a fake Firecrawl API on 127.0.0.1
(``api_url``, one attempt: ``max_retries=1``, a 1 s timeout). Errors are Firecrawl's
``{"success": false, "error", "details"?, "code"?}`` bodies; a throttled key is told when to
come back only inside the ``error`` text. The client raises one ``FirecrawlError`` subclass
per status (``UnauthorizedError``, ``PaymentRequiredError``, ``WebsiteNotSupportedError``,
``RequestTimeoutError``, ``RateLimitError``...) or per scrape ``code``
(``DNSResolutionError``), requests' exceptions from the transport and ``ValueError`` from
its own checks. Faked: the Firecrawl API; real: the client and requests."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    TO,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("firecrawl-py", "fake Firecrawl API", http_setup, half="heldout10")

_KEY = "PLANTEDfc-7d2e9b4a1c6f48e3a5b0d9c2e7f1a384"


def _scrape(url: str, target: str = "https://docs.example.com/guide") -> Any:
    from firecrawl import Firecrawl  # type: ignore[import-untyped]

    client = Firecrawl(api_key=_KEY, api_url=url, timeout=1, max_retries=1)
    return client.scrape(target, formats=["markdown"])


def _err(message: str, **extra: Any) -> dict[str, Any]:
    return {"success": False, "error": message, **extra}


SCRAPE: list[Row] = [
    (
        "bad_key",
        401,
        _err("Unauthorized: Invalid token"),
        {},
        AUTH,
        None,
        "the API key is unknown or was revoked",
    ),
    (
        "no_credits",
        402,
        _err(
            "Insufficient credits to perform this request. For more credits, you can upgrade "
            "your plan at https://firecrawl.dev/pricing or try changing the request limit to a "
            "lower value."
        ),
        {},
        QUOTA,
        None,
        "the team's credits are used up",
    ),
    (
        "throttled",
        429,
        _err(
            "Rate limit exceeded. Consumed (req/min): 11, Remaining (req/min): 0. Upgrade your "
            "plan at https://firecrawl.dev/pricing for increased rate limits or please retry "
            "after 45s, resets at Sun Nov 29 2026 18:50:00 GMT+0000 (Coordinated Universal "
            "Time)"
        ),
        {},
        RL,
        45.0,
        "the team's per-minute request rate is exceeded",
    ),
    (
        "site_not_supported",
        403,
        _err(
            "This website is no longer supported, please reach out to help@firecrawl.com for "
            "more info on how to activate it on your account."
        ),
        {},
        AUTH | INT,
        None,
        "Firecrawl refuses to scrape that site for this account",
    ),
    (
        "scrape_timeout",
        408,
        _err("Request timed out"),
        {},
        TO,
        None,
        "the page did not load within Firecrawl's scrape timeout",
    ),
    (
        "invalid_url",
        400,
        _err(
            "Bad Request",
            details=[
                {
                    "code": "invalid_string",
                    "validation": "url",
                    "message": "Invalid URL",
                    "path": ["url"],
                }
            ],
        ),
        {},
        INT,
        None,
        "the URL to scrape is invalid (the pack's input)",
    ),
    (
        "target_dns",
        500,
        _err(
            "Specified URL is failing to load in the browser. Error code: ERR_NAME_NOT_RESOLVED",
            code="SCRAPE_DNS_RESOLUTION_ERROR",
        ),
        {},
        NF | INT,
        None,
        "the site the caller named does not resolve (Firecrawl itself is fine)",
    ),
    (
        "server_error",
        500,
        _err(
            "An unexpected error occurred. Please contact help@firecrawl.com for help. Your "
            "exception ID is 4f1c2b9a8e7d4c3b"
        ),
        {},
        NET,
        None,
        "Firecrawl failed",
    ),
    (
        "cloudflare_520",
        520,
        "<!DOCTYPE html>\n<html><head><title>api.firecrawl.dev | 520: Web server is returning "
        "an unknown error</title></head><body>Error code 520</body></html>\n",
        {"Content-Type": "text/html; charset=UTF-8"},
        NET,
        None,
        "Cloudflare got an empty or unexpected answer from Firecrawl's origin",
    ),
]
http_cases(FAM, _scrape, SCRAPE)


def _garbage(ctx: Http) -> Any:
    return _scrape(f"http://127.0.0.1:{ctx.net.garbage}")


FAM.add("garbage", NET, "the peer answers bytes of no protocol, then closes", _garbage)
FAM.add(
    "empty_url",
    INT,
    "an empty URL to scrape: the client refuses before sending",
    lambda c: _scrape(c.http.url, target=""),
)
