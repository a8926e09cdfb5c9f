"""workos (WorkOS's Python SDK; here its asyncio client on httpx) against a fake WorkOS API
answering its error bodies (``{"code", "message", "errors", "entity_id"}`` as the SDK parses
them) and statuses: 401 invalid API key, 403, 404 unknown organization, 409 a domain or
external id already taken, 422 validation failures, 429 with ``Retry-After``, 500 and 502; plus
the SDK's own timeout and the transport failures. The SDK's retries are turned off."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
    run_async,
)

FAM = family("workos", "fake WorkOS API", http_setup, half="heldout15")

_ORG = "org_01HZK3N8W4Q7R2T6Y9B5C1D0EF"


async def _create(url: str) -> Any:
    from workos import AsyncWorkOSClient

    client = AsyncWorkOSClient(
        api_key="sk_test_PLANTEDworkoskey",
        client_id="client_01HZK3N8W4Q7R2T6Y9B5C1D0EG",
        base_url=url,
        request_timeout=1,
        max_retries=0,
    )
    return await client.organizations.create_organization(
        name="Acme Corp", external_id="acme-42", domains=["acme.example"]
    )


def _call(url: str) -> Any:
    return run_async(_create(url))


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        {"message": "Could not authorize the request. Maybe your API key is invalid?"},
        {},
        AUTH,
        None,
        "the API key is not valid",
    ),
    (
        "forbidden",
        403,
        {"code": "forbidden", "message": "Forbidden"},
        {},
        AUTH,
        None,
        "the API key may not manage organizations",
    ),
    (
        "not_found",
        404,
        {
            "code": "entity_not_found",
            "entity_id": _ORG,
            "message": f"Could not find 'organization' with id '{_ORG}'.",
        },
        {},
        NF,
        None,
        "the organization does not exist",
    ),
    (
        "external_id_taken",
        409,
        {
            "code": "external_id_conflict",
            "message": "An organization with external_id 'acme-42' already exists.",
        },
        {},
        EXISTS,
        None,
        "another organization already has this external id",
    ),
    (
        "domain_taken",
        409,
        {
            "code": "organization_domain_already_used",
            "message": "The domain 'acme.example' is already used by another organization.",
        },
        {},
        EXISTS,
        None,
        "the domain belongs to another organization",
    ),
    (
        "validation_failed",
        422,
        {
            "code": "invalid_request_parameters",
            "message": "Validation failed",
            "errors": [
                {"code": "domain_invalid", "field": "domains", "message": "Domain is invalid"}
            ],
        },
        {},
        INT,
        None,
        "a parameter is invalid (the caller's input)",
    ),
    (
        "bad_request",
        400,
        {"code": "invalid_request", "message": "The request body is not valid JSON."},
        {},
        INT,
        None,
        "a malformed request (the caller's input)",
    ),
    (
        "rate_limited",
        429,
        {"message": "Too many requests. Please try again later."},
        {"Retry-After": "2"},
        RL,
        2.0,
        "over the API's rate limit, with the server's delay",
    ),
    (
        "internal",
        500,
        {"message": "Internal Server Error"},
        {},
        NET,
        None,
        "WorkOS failed",
    ),
    (
        "bad_gateway",
        502,
        "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the edge proxy's bare 502 page",
    ),
]
http_cases(FAM, _call, ROWS)
