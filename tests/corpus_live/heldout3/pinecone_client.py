"""pinecone (Pinecone's Python SDK) against a fake Pinecone API (control and data plane) answering its
documented error bodies (``{"error": {"code": "NOT_FOUND", "message": ...}, "status": 404}``):
gRPC-style code words in JSON, where a 403 and a 429 may each be a plan's quota."""

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
)

FAM = family("pinecone", "fake Pinecone API (control and data plane)", http_setup, half="heldout3")


def _pc(url: str) -> Any:
    from pinecone import Pinecone, RetryConfig

    return Pinecone(
        api_key="pcsk_PLANTED_pinecone_key",
        host=url,
        timeout=1,
        retry_config=RetryConfig(max_retries=0),
    )


def _describe(url: str) -> Any:
    return _pc(url).describe_index("docs")


def _create(url: str) -> Any:
    from pinecone import ServerlessSpec

    return _pc(url).create_index(
        "docs",
        dimension=1024,
        metric="cosine",
        spec=ServerlessSpec(cloud="aws", region="us-east-1"),
        timeout=-1,
    )


def _upsert(url: str) -> Any:
    index = _pc(url).Index(host=url)
    return index.upsert(vectors=[("doc-1", [0.1, 0.2, 0.3])], namespace="default")


def _e(status: int, code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}, "status": status}


DESCRIBE: list[Row] = [
    (
        "index_not_found",
        404,
        _e(404, "NOT_FOUND", "Resource docs not found"),
        {},
        NF,
        None,
        "the index does not exist",
    ),
    (
        "bad_key",
        401,
        _e(401, "UNAUTHENTICATED", "Invalid API Key"),
        {},
        AUTH,
        None,
        "the API key is invalid",
    ),
    (
        "too_many",
        429,
        _e(429, "RESOURCE_EXHAUSTED", "Too many requests. Please retry shortly."),
        {},
        RL,
        None,
        "the control plane's request rate",
    ),
    (
        "internal",
        500,
        _e(500, "UNKNOWN", "Internal error. Please try again later."),
        {},
        NET,
        None,
        "Pinecone failed",
    ),
    (
        "unavailable",
        503,
        _e(503, "UNAVAILABLE", "The service is temporarily unavailable. Please try again later."),
        {},
        NET,
        None,
        "Pinecone is unavailable",
    ),
]
http_cases(FAM, _describe, DESCRIBE)
http_cases(
    FAM,
    _create,
    [
        (
            "index_exists",
            409,
            _e(409, "ALREADY_EXISTS", "Resource docs already exists"),
            {},
            EXISTS,
            None,
            "an index of that name exists",
        ),
        (
            "max_indexes",
            403,
            _e(
                403,
                "FORBIDDEN",
                "Request failed. You've reached the max serverless indexes allowed in project "
                "Default (5). To add more serverless indexes, upgrade your plan.",
            ),
            {},
            QUOTA,
            None,
            "a 403 that is the plan's index quota, not a permission",
        ),
        (
            "bad_dimension",
            400,
            _e(
                400,
                "INVALID_ARGUMENT",
                "Bad request: The dimension must be between 1 and 20000, got 0.",
            ),
            {},
            INT,
            None,
            "the request is invalid (the pack's input)",
        ),
        (
            "payment",
            402,
            _e(
                402,
                "PAYMENT_REQUIRED",
                "Request failed. Your organization's payment method was declined. Update your "
                "billing information to continue.",
            ),
            {},
            QUOTA | AUTH,
            None,
            "the organization's billing is in arrears",
        ),
    ],
    transport=False,
)
http_cases(
    FAM,
    _upsert,
    [
        (
            "write_units",
            429,
            _e(
                429,
                "RESOURCE_EXHAUSTED",
                "Request failed. You've reached your write unit limit for the current month "
                "(2000000). To continue writing data, upgrade your plan.",
            ),
            {},
            QUOTA,
            None,
            "a 429 that is the month's write units: waiting seconds does not help",
        ),
    ],
    transport=False,
)
