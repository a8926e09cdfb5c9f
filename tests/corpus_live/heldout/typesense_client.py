"""The typesense Python client against a fake Typesense server."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from corpus_live.core import AUTH, EXISTS, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("typesense", 'fake Typesense API ({"message": ...})', http_setup, half="heldout")


def _call(url: str) -> Any:
    import typesense

    u = urlsplit(url)
    client = typesense.Client(
        {
            "nodes": [{"host": u.hostname, "port": u.port, "protocol": "http"}],
            "api_key": "ts-PLANTED",
            "connection_timeout_seconds": 1,
            "num_retries": 0,
            "retry_interval_seconds": 0,
        }
    )
    return client.collections["books"].retrieve()


ROWS: list[Row] = [
    ("not_found", 404, {"message": "Not Found"}, {}, NF, None, "no such collection"),
    (
        "collection_missing",
        404,
        {"message": "Collection not found"},
        {},
        NF,
        None,
        "collection not found",
    ),
    (
        "forbidden",
        401,
        {"message": "Forbidden - a valid `x-typesense-api-key` header must be sent."},
        {},
        AUTH,
        None,
        "bad key",
    ),
    (
        "exists",
        409,
        {"message": "A collection with name `books` already exists."},
        {},
        EXISTS,
        None,
        "already exists",
    ),
    ("bad_request", 400, {"message": "Bad JSON."}, {}, INT, None, "bad request"),
    (
        "unprocessable",
        422,
        {"message": "Field `year` must be an int32."},
        {},
        INT,
        None,
        "document does not fit the schema",
    ),
    ("not_ready", 503, {"message": "Not Ready or Lagging"}, {}, NET, None, "node lagging"),
    (
        "rate",
        429,
        {"message": "Rate limit exceeded or blocked"},
        {"Retry-After": "7"},
        RL,
        7.0,
        "rate limit",
    ),
    ("internal", 500, {"message": "Internal Server Error"}, {}, NET, None, "server error"),
]
http_cases(FAM, _call, ROWS)
