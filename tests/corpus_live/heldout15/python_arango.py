"""``python-arango`` (the ArangoDB driver) as a pack uses it, against a fake ArangoDB 3.11 on
127.0.0.1 that answers ArangoDB's own JSON error documents (``code``, ``error``,
``errorMessage``, ``errorNum``, as ``arangod`` writes them) and status codes. No retries
(``retry_attempts=0``) and a 2 s request timeout."""

from __future__ import annotations

from typing import Any

from arango.client import ArangoClient
from arango.http import DefaultHTTPClient

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NF,
    QUOTA,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family(
    "python-arango",
    "python-arango against a fake ArangoDB 3.11 (its error documents)",
    http_setup,
    half="heldout15",
)

_H = {"Server": "ArangoDB", "X-Content-Type-Options": "nosniff"}


def _db(base: str) -> Any:
    http = DefaultHTTPClient(request_timeout=2, retry_attempts=0)
    client = ArangoClient(hosts=base, http_client=http, request_timeout=2)
    return client.db("shop", username="app", password="app-pw")


def _insert(base: str) -> Any:
    return _db(base).collection("orders").insert({"_key": "ord-1042", "total": 31.5})


def _query(base: str) -> Any:
    cursor = _db(base).aql.execute(
        "FOR o IN orders FILTER o.total > @min RETURN o", bind_vars={"min": 10}
    )
    return list(cursor)


def _e(status: int, num: int, message: str) -> dict[str, Any]:
    return {"code": status, "error": True, "errorMessage": message, "errorNum": num}


INSERT: list[Row] = [
    (
        "unauthorized",
        401,
        _e(401, 11, "not authorized to execute this request"),
        _H,
        AUTH,
        None,
        "wrong user or password",
    ),
    (
        "forbidden",
        403,
        _e(403, 11, "forbidden"),
        _H,
        AUTH,
        None,
        "the user has no write access to the collection",
    ),
    (
        "no_database",
        404,
        _e(404, 1228, "database not found"),
        _H,
        NF,
        None,
        "the shop database does not exist",
    ),
    (
        "no_collection",
        404,
        _e(404, 1203, "collection or view not found: orders"),
        _H,
        NF,
        None,
        "the orders collection does not exist",
    ),
    (
        "unique_constraint",
        409,
        _e(
            409,
            1210,
            "unique constraint violated - in index primary of type primary over '_key'; "
            "conflicting key: ord-1042",
        ),
        _H,
        EXISTS,
        None,
        "a document with that _key exists",
    ),
    (
        "illegal_key",
        400,
        _e(400, 1221, "illegal document key"),
        _H,
        INT,
        None,
        "the server rejects the document key",
    ),
    (
        "internal",
        500,
        _e(500, 4, "internal error"),
        _H,
        INT,
        None,
        "the server fails internally",
    ),
]

QUERY: list[Row] = [
    (
        "aql_syntax",
        400,
        _e(
            400,
            1501,
            "AQL: syntax error, unexpected identifier near 'FILTR o.total > @min RETURN o' "
            "at position 1:17 (while parsing)",
        ),
        _H,
        INT,
        None,
        "the query does not parse",
    ),
    (
        "aql_bind_missing",
        400,
        _e(400, 1551, "AQL: no value specified for declared bind parameter 'min' (while parsing)"),
        _H,
        INT,
        None,
        "a declared bind parameter has no value",
    ),
    (
        "aql_memory_limit",
        500,
        _e(500, 32, "AQL: query would use more memory than allowed (while executing)"),
        _H,
        QUOTA | INT,
        None,
        "the query hits its memory limit",
    ),
]

http_cases(FAM, _insert, INSERT)
http_cases(FAM, _query, QUERY, transport=False)
