"""lithic (Lithic's card-issuing API, a Stainless-generated SDK over httpx) through its
async client ``AsyncLithic`` against a fake Lithic API on 127.0.0.1 (``base_url``, retries
off, a 1 s timeout). Errors are Lithic's ``{"debugging_request_id", "message"}`` bodies; a
throttled key is told when to come back in ``Retry-After``. The SDK raises one
``APIStatusError`` subclass per status (``AuthenticationError``, ``NotFoundError``,
``ConflictError``, ``RateLimitError``, ``InternalServerError``...), ``APIConnectionError``
and ``APITimeoutError`` from the transport, and ``ValueError`` for its own argument checks."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
    run_async,
)

FAM = family("lithic", "fake Lithic API (async client)", http_setup, half="heldout9")

_KEY = "PLANTEDlithicKey-4f0c2a9e-7b1d-4c55-9a0e-2d1b6f3c8e71"
_CARD = "7ef7d65c-9023-4da3-b113-3b8583fd7951"
_REQ = "94d5dcd6-4d2e-4c3a-9a2f-6a3b1f0e8c21"


def _client(url: str) -> Any:
    from lithic import AsyncLithic

    return AsyncLithic(api_key=_KEY, base_url=url, max_retries=0, timeout=1.0)


async def _get(url: str, token: str = _CARD) -> Any:
    async with _client(url) as client:
        return await client.cards.retrieve(token)


async def _create(url: str) -> Any:
    async with _client(url) as client:
        return await client.cards.create(type="VIRTUAL", memo="ops", spend_limit=50000)


def _err(message: str) -> dict[str, str]:
    return {"debugging_request_id": _REQ, "message": message}


GET: list[Row] = [
    (
        "bad_key",
        401,
        _err("Please provide API key in Authorization header"),
        {},
        AUTH,
        None,
        "the API key is unknown or was revoked",
    ),
    (
        "forbidden",
        403,
        _err("Insufficient privileges. Your API key is not allowed to access this resource."),
        {},
        AUTH,
        None,
        "the key lacks the scope for cards",
    ),
    (
        "no_card",
        404,
        _err("Card not found"),
        {},
        NF,
        None,
        "no card with that token in this program",
    ),
    (
        "throttled",
        429,
        _err("Too many requests. Please slow down."),
        {"Retry-After": "2"},
        RL,
        2.0,
        "the key's request rate is exceeded",
    ),
    (
        "server_error",
        500,
        _err("Internal server error"),
        {},
        NET,
        None,
        "Lithic failed",
    ),
    (
        "unavailable",
        503,
        _err("Service temporarily unavailable"),
        {},
        NET,
        None,
        "Lithic is down for maintenance",
    ),
]
http_cases(FAM, lambda url: run_async(_get(url)), GET)

CREATE: list[Row] = [
    (
        "idempotency_conflict",
        409,
        _err("A request with this Idempotency-Key is already in progress"),
        {},
        EXISTS | INT,
        None,
        "the same idempotency key was sent twice at once",
    ),
    (
        "bad_spend_limit",
        400,
        _err("spend_limit: ensure this value is greater than or equal to 0"),
        {},
        INT,
        None,
        "the request body is invalid (the pack's input)",
    ),
    (
        "card_limit",
        422,
        _err("Account has reached the maximum number of open cards"),
        {},
        QUOTA,
        None,
        "the program's open-card allowance is used up",
    ),
]
http_cases(FAM, lambda url: run_async(_create(url)), CREATE, transport=False)


def _empty_token(ctx: Http) -> Any:
    return run_async(_get(ctx.http.url, token=""))


FAM.add("empty_token", INT, "an empty card token: the SDK refuses before sending", _empty_token)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: run_async(_get(f"http://127.0.0.1:{c.net.garbage}")),
)
FAM.add(
    "html_gateway",
    NET,
    "HTTP 502: a load balancer's HTML page instead of Lithic's JSON",
    lambda c: (
        c.http.set(
            502,
            "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad "
            "Gateway</h1></center></body></html>\r\n",
            content_type="text/html",
        ),
        run_async(_get(c.http.url)),
    ),
)
