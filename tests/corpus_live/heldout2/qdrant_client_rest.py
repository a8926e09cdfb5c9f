"""qdrant-client (REST) against a fake Qdrant answering its documented error bodies
(``{"status": {"error": "..."}, "time": ...}``; actix's plain-text pages for the API-key
middleware and the payload limit)."""

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
)

FAM = family(
    "qdrant-client", "fake Qdrant 1.x REST API (error bodies)", http_setup, half="heldout2"
)


def _client(url: str) -> Any:
    from qdrant_client import QdrantClient

    return QdrantClient(url=url, api_key=None, timeout=1, check_compatibility=False)


def _get(url: str) -> Any:
    return _client(url).get_collection("docs")


def _create(url: str) -> Any:
    from qdrant_client.models import Distance, VectorParams

    return _client(url).create_collection(
        "docs", vectors_config=VectorParams(size=4, distance=Distance.COSINE)
    )


def _upsert(url: str) -> Any:
    from qdrant_client.models import PointStruct

    return _client(url).upsert("docs", points=[PointStruct(id=1, vector=[0.1, 0.2, 0.3])])


def _status(error: str) -> dict[str, Any]:
    return {"status": {"error": error}, "time": 0.000021}


ROWS: list[Row] = [
    (
        "bad_api_key",
        401,
        "Invalid API key or JWT",
        {"Content-Type": "text/plain; charset=utf-8"},
        AUTH,
        None,
        "the api-key middleware rejects the key (plain text)",
    ),
    (
        "forbidden",
        403,
        _status("Forbidden: Global access is required"),
        {},
        AUTH,
        None,
        "a JWT scoped to other collections",
    ),
    (
        "no_collection",
        404,
        _status("Not found: Collection `docs` doesn't exist!"),
        {},
        NF,
        None,
        "the collection does not exist",
    ),
    (
        "rate_limit",
        429,
        _status("Rate limiting exceeded: Read rate limit exceeded, retry later"),
        {"Retry-After": "5"},
        RL,
        5.0,
        "strict mode's read rate limit, with Retry-After",
    ),
    (
        "internal",
        500,
        _status("Service internal error: task 1873 panicked: index out of bounds"),
        {},
        NET,
        None,
        "Qdrant failed (5xx)",
    ),
    (
        "unavailable",
        503,
        _status("Service unavailable: shard 0 is not active"),
        {},
        NET,
        None,
        "no active replica for the shard",
    ),
]
http_cases(FAM, _get, ROWS)
http_cases(
    FAM,
    _create,
    [
        (
            "exists",
            409,
            _status("Wrong input: Collection `docs` already exists!"),
            {},
            EXISTS,
            None,
            "creating a collection that exists",
        )
    ],
    transport=False,
)
http_cases(
    FAM,
    _upsert,
    [
        (
            "bad_dimension",
            400,
            _status("Wrong input: Vector dimension error: expected dim: 4, got 3"),
            {},
            INT,
            None,
            "a vector of the wrong size: the pack's input",
        ),
        (
            "too_large",
            413,
            "JSON payload (33554500 bytes) is larger than allowed (limit: 33554432 bytes).",
            {"Content-Type": "text/plain; charset=utf-8"},
            INT,
            None,
            "a payload over the server's limit never passes",
        ),
    ],
    transport=False,
)
