"""cloudflare (Cloudflare's Stainless-generated SDK, its async ``AsyncCloudflare`` client over
httpx) against a fake Cloudflare API v4 (``/client/v4``) on 127.0.0.1 (``base_url`` pointed
at it, ``max_retries=0`` so each request is sent once, a 1 s timeout). Cloudflare answers
every error in its v4 envelope (``{"success": false, "errors": [{code, message,
error_chain?}], "messages": [], "result": null}``) with ``cf-ray``; a malformed token is a 400
(6003/6111), a bad or under-scoped token a 403 (9109, 10000); DNS records have their own codes
(81044 missing, 81058 identical record, 81045 quota, 9005 invalid content); the global API
rate limit is a 429 (971) with ``retry-after`` and the ``ratelimit``/``ratelimit-policy``
headers. The client raises one ``APIStatusError`` subclass per status,
``APIConnectionError``/``APITimeoutError`` for the transport. Faked: the API; real: the
client and httpx."""

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

FAM = family("cloudflare", "fake Cloudflare API v4", http_setup, half="heldout13")

_ZONE = "023e105f4ecef8ad9ca31a8372d0c353"
_RECORD = "372e67954025e0ba6aaa6d586b9e0b59"
_H = {"cf-ray": "8e9a1c2b3d4f5a6b-AMS", "cf-cache-status": "DYNAMIC"}


def _client(url: str) -> Any:
    from cloudflare import AsyncCloudflare

    return AsyncCloudflare(
        api_token="PLANTEDcfTok_9xQ2mV7bN4kR1sT8wZ3yL6pH0jD5fG",
        base_url=url + "/client/v4",
        max_retries=0,
        timeout=1.0,
    )


async def _get(url: str) -> Any:
    async with _client(url) as cf:
        return await cf.dns.records.get(_RECORD, zone_id=_ZONE)


async def _create(url: str) -> Any:
    async with _client(url) as cf:
        return await cf.dns.records.create(
            zone_id=_ZONE, name="api.example.com", type="A", content="198.51.100.4", ttl=300
        )


def _fail(*errors: dict[str, Any]) -> dict[str, Any]:
    return {"success": False, "errors": list(errors), "messages": [], "result": None}


def _e(code: int, message: str, **extra: Any) -> dict[str, Any]:
    return {"code": code, "message": message, **extra}


GET: list[Row] = [
    (
        "malformed_token",
        400,
        _fail(
            _e(
                6003,
                "Invalid request headers",
                error_chain=[_e(6111, "Invalid format for Authorization header")],
            )
        ),
        _H,
        AUTH,
        None,
        "the API token is not well-formed",
    ),
    (
        "invalid_token",
        403,
        _fail(_e(9109, "Invalid access token")),
        _H,
        AUTH,
        None,
        "the API token was rolled or deleted",
    ),
    (
        "missing_scope",
        403,
        _fail(_e(10000, "Authentication error")),
        _H,
        AUTH,
        None,
        "the token has no DNS permission on this zone",
    ),
    (
        "record_missing",
        404,
        _fail(_e(81044, "Record does not exist.")),
        _H,
        NF,
        None,
        "no DNS record with this id in the zone",
    ),
    (
        "rate_limited",
        429,
        _fail(_e(971, "Please wait and consider throttling your request speed")),
        {
            **_H,
            "retry-after": "57",
            "ratelimit": '"default";r=0;t=57',
            "ratelimit-policy": '"default";q=1200;w=300',
        },
        RL,
        57.0,
        "the user's global API rate limit, with its delay",
    ),
    (
        "internal",
        500,
        _fail(_e(10001, "Internal server error")),
        _H,
        NET,
        None,
        "Cloudflare's API failed serving the request",
    ),
]
http_cases(FAM, lambda url: run_async(_get(url)), GET)

CREATE: list[Row] = [
    (
        "identical_record",
        400,
        _fail(_e(81058, "An identical record already exists.")),
        _H,
        EXISTS,
        None,
        "the zone holds the same record already",
    ),
    (
        "invalid_content",
        400,
        _fail(_e(9005, "Content for A record must be a valid IPv4 address.")),
        _H,
        INT,
        None,
        "the caller's record content is not an address",
    ),
    (
        "record_quota",
        400,
        _fail(_e(81045, "Record quota exceeded.")),
        _H,
        QUOTA,
        None,
        "the zone's plan allows no more DNS records",
    ),
]
http_cases(FAM, lambda url: run_async(_create(url)), CREATE, transport=False)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: run_async(_get(f"http://127.0.0.1:{c.net.garbage}")),
)
