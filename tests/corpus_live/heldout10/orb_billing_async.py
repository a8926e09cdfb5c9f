"""orb-billing (Orb's usage-based billing API, a Stainless-generated SDK over httpx) through
its async client ``AsyncOrb`` against a fake Orb API on 127.0.0.1 (``base_url``, retries
off, a 1 s timeout). Errors are Orb's problem-details bodies ``{"type", "status", "title",
"detail"}`` whose ``type`` is a link into Orb's error reference (the SDK picks its exception
class from it: ``ResourceNotFound``, ``DuplicateResourceCreation``, ``TooManyRequests``...),
with ``validation_errors`` on request validation errors. ``APIConnectionError`` and
``APITimeoutError`` come from the transport; ``OrbError``/``ValueError`` from the SDK's own
checks. Faked: the Orb API; real: the SDK and httpx."""

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
    Row,
    family,
    http_cases,
    http_setup,
    run_async,
)

FAM = family("orb-billing", "fake Orb API (async client)", http_setup, half="heldout10")

_KEY = "PLANTEDorbKey_3b1f9c27d54e4a0f8e6d2c71b0a95f13"
_CUSTOMER = "XimGiw3pnsgusvc3"
_REF = "https://docs.withorb.com/reference/error-responses"


def _client(url: str, key: str | None = _KEY) -> Any:
    from orb import AsyncOrb

    return AsyncOrb(api_key=key, base_url=url, max_retries=0, timeout=1.0)


async def _fetch(url: str, customer: str = _CUSTOMER) -> Any:
    async with _client(url) as client:
        return await client.customers.fetch(customer)


async def _create(url: str) -> Any:
    async with _client(url) as client:
        return await client.customers.create(
            email="billing@example.com", name="Example Corp", external_customer_id="acct_8812"
        )


def _err(anchor: str, status: int, title: str, detail: str | None, **extra: Any) -> dict[str, Any]:
    return {"type": f"{_REF}#{anchor}", "status": status, "title": title, "detail": detail, **extra}


FETCH: list[Row] = [
    (
        "bad_key",
        401,
        _err("401-authentication-error", 401, "Authentication Error", "Invalid API key"),
        {},
        AUTH,
        None,
        "the API key is unknown or was revoked",
    ),
    (
        "no_customer",
        404,
        _err(
            "404-resource-not-found",
            404,
            "Resource Not Found",
            f"Customer with id `{_CUSTOMER}` not found",
        ),
        {},
        NF,
        None,
        "no customer with that id in this account",
    ),
    (
        "throttled",
        429,
        _err("429-too-many-requests", 429, "Too Many Requests", "Rate limit exceeded"),
        {"Retry-After": "3"},
        RL,
        3.0,
        "the account's request rate is exceeded",
    ),
    (
        "server_error",
        500,
        _err("500-internal-server-error", 500, "Internal Server Error", None),
        {},
        NET,
        None,
        "Orb failed",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad "
        "Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the load balancer in front of Orb has no healthy backend",
    ),
]
http_cases(FAM, lambda url: run_async(_fetch(url)), FETCH)

CREATE: list[Row] = [
    (
        "duplicate",
        400,
        _err(
            "400-duplicate-resource-creation",
            400,
            "Duplicate Resource Creation",
            "Customer with external_customer_id `acct_8812` already exists",
        ),
        {},
        EXISTS,
        None,
        "a customer with that external id already exists",
    ),
    (
        "conflict",
        409,
        _err(
            "409-resource-conflict",
            409,
            "Resource Conflict",
            "A request with this idempotency key is currently being processed",
        ),
        {},
        EXISTS | INT,
        None,
        "the same creation is being processed concurrently",
    ),
    (
        "invalid_email",
        400,
        _err(
            "400-request-validation-errors",
            400,
            "Request Validation Error",
            None,
            validation_errors=["email: value is not a valid email address"],
        ),
        {},
        INT,
        None,
        "the request body fails validation (the pack's input)",
    ),
    (
        "feature_not_available",
        400,
        _err(
            "404-feature-not-available",
            400,
            "Feature Not Available",
            "Multi-currency customers are not enabled for your account",
        ),
        {},
        QUOTA | INT,
        None,
        "the account's plan does not include the feature",
    ),
]
http_cases(FAM, lambda url: run_async(_create(url)), CREATE, transport=False)


async def _fetch_nokey(url: str) -> Any:
    async with _client(url, key=None) as client:
        return await client.customers.fetch(_CUSTOMER)


FAM.add(
    "no_key",
    AUTH | INT,
    "no API key configured: the SDK refuses to build a client",
    lambda c: run_async(_fetch_nokey(c.http.url)),
)
FAM.add(
    "empty_id",
    INT,
    "an empty customer id: the SDK refuses before sending",
    lambda c: run_async(_fetch(c.http.url, customer="")),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: run_async(_fetch(f"http://127.0.0.1:{c.net.garbage}")),
)
