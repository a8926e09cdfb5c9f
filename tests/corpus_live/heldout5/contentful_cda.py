"""contentful (Contentful's Content Delivery API SDK, over requests) against a fake CDA on
127.0.0.1 (``api_url`` and ``https=False``): errors are Contentful's documented bodies
``{"sys": {"type": "Error", "id": ...}, "message", "details", "requestId"}`` with the
``X-Contentful-Request-Id`` header, and 429 ``RateLimitExceeded`` with
``X-Contentful-RateLimit-Reset`` (the seconds to wait), which the SDK reads into
``RateLimitExceededError.reset_time()``: the pack lets no retry sleep inside the handler
(``max_rate_limit_retries=0``, ``max_rate_limit_wait=0``). The SDK raises its
``contentful.errors.*`` per status, ``EntryNotFoundError`` itself for an empty answer to an
entry lookup, and requests' own exceptions on the transport."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    RL,
    TO,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("contentful", "fake Contentful Content Delivery API", http_setup, half="heldout5")

_SPACE = "cfexampleapi"
_RID = "0b9f4d2a-7c1e-4e55-9a0f-3c2d1e4b5a69"


def _client(url: str) -> Any:
    import contentful

    return contentful.Client(
        _SPACE,
        "PLANTEDcontentfulcdatoken000000000000000000",
        api_url=url.removeprefix("http://"),
        https=False,
        timeout_s=1,
        content_type_cache=False,
        max_rate_limit_retries=0,
        max_rate_limit_wait=0,
    )


def _entries(url: str) -> Any:
    return _client(url).entries({"content_type": "article", "fields.slug": "launch"})


def _entry(url: str) -> Any:
    return _client(url).entry("nyancat")


def _err(id: str, message: str, details: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"sys": {"type": "Error", "id": id}, "message": message}
    if details is not None:
        body["details"] = details
    body["requestId"] = _RID
    return body


_H = {"X-Contentful-Request-Id": _RID}

ROWS: list[Row] = [
    (
        "bad_token",
        401,
        _err(
            "AccessTokenInvalid",
            "The access token you sent could not be found or is invalid.",
        ),
        _H,
        AUTH,
        None,
        "the delivery token is unknown or revoked",
    ),
    (
        "access_denied",
        403,
        _err(
            "AccessDenied",
            "The resource could not be accessed with the provided access token.",
            {"reasons": ["This token has no access to the requested environment."]},
        ),
        _H,
        AUTH,
        None,
        "the token is not scoped to this environment",
    ),
    (
        "no_space",
        404,
        _err(
            "NotFound",
            "The resource could not be found.",
            {"type": "Space", "id": _SPACE},
        ),
        _H,
        NF,
        None,
        "the space id does not exist",
    ),
    (
        "bad_query",
        400,
        _err(
            "InvalidQuery",
            "The query you sent was invalid. Probably a filter or ordering specification is not "
            "applicable to the type of a field.",
            {
                "errors": [
                    {
                        "name": "unknown",
                        "path": ["fields", "slug"],
                        "details": 'The path "fields.slug" is not recognized',
                    }
                ]
            },
        ),
        _H,
        INT,
        None,
        "a filter on a field the content type lacks (the pack's input)",
    ),
    (
        "rate_limited",
        429,
        _err(
            "RateLimitExceeded",
            "You have exceeded the rate limit of the Organization this Space belongs to by making "
            "too many API requests within a short timespan. Please wait a moment before trying "
            "the request again.",
        ),
        {**_H, "X-Contentful-RateLimit-Reset": "2"},
        RL,
        2.0,
        "the organization's rate limit, the wait in X-Contentful-RateLimit-Reset",
    ),
    (
        "server_error",
        500,
        _err("ServerError", "Internal server error."),
        _H,
        NET,
        None,
        "Contentful failed",
    ),
    (
        "hibernated",
        502,
        _err(
            "BadGateway",
            "The space is hibernated. Make a request to the Content Management API to "
            "reactivate it.",
        ),
        _H,
        NET,
        None,
        "the space is hibernated (Contentful's 502)",
    ),
    (
        "unavailable",
        503,
        _err("ServiceUnavailable", "The service is temporarily unavailable."),
        _H,
        NET,
        None,
        "Contentful is unavailable",
    ),
]
http_cases(FAM, _entries, ROWS)


def _no_entry(ctx: Any) -> Any:
    ctx.http.set(
        200,
        {"sys": {"type": "Array"}, "total": 0, "skip": 0, "limit": 100, "items": []},
        _H,
    )
    return _entry(ctx.http.url)


FAM.add(
    "no_entry",
    NF,
    "HTTP 200 with no items: the SDK raises EntryNotFoundError for the id",
    _no_entry,
)


def _gateway_timeout(ctx: Any) -> Any:
    ctx.http.set(
        504,
        "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n"
        "</body></html>\n",
        {"Via": "1.1 varnish"},
        "text/html",
    )
    return _entries(ctx.http.url)


FAM.add(
    "gateway_timeout",
    TO | NET,
    "HTTP 504: the CDN timed out reaching the origin",
    _gateway_timeout,
)
