"""opensearch-py against a fake OpenSearch answering the engine's documented error bodies
(``{"error": {"root_cause": [...], "type": ..., "reason": ...}, "status": N}``, the
security plugin's plain ``Unauthorized``)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
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

FAM = family("opensearch-py", "fake OpenSearch 2.x (error bodies)", http_setup, half="heldout2")


def _client(url: str) -> Any:
    from opensearchpy import OpenSearch

    return OpenSearch(hosts=[url], timeout=1, max_retries=0, retry_on_timeout=False)


def _get(url: str) -> Any:
    return _client(url).get(index="orders", id="1")


def _create_index(url: str) -> Any:
    return _client(url).indices.create(index="orders")


def _create_doc(url: str) -> Any:
    return _client(url).create(index="orders", id="1", body={"n": 1})


def _search(url: str) -> Any:
    return _client(url).search(index="orders", body={"query": {"match_all": {}}})


def _err(type_: str, reason: str, status: int, **extra: Any) -> dict[str, Any]:
    cause = {"type": type_, "reason": reason, **extra}
    return {"error": {"root_cause": [cause], **cause}, "status": status}


_SECURITY = {"WWW-Authenticate": 'Basic realm="OpenSearch Security"'}

GET_ROWS: list[Row] = [
    (
        "unauthorized",
        401,
        "Unauthorized",
        _SECURITY,
        AUTH,
        None,
        "security plugin: wrong password (plain text body, WWW-Authenticate)",
    ),
    (
        "no_permission",
        403,
        _err(
            "security_exception",
            "no permissions for [indices:data/read/get] and User [name=reader, "
            "backend_roles=[], requestedTenant=null]",
            403,
        ),
        {},
        AUTH,
        None,
        "security_exception: the user's roles lack the action",
    ),
    (
        "no_index",
        404,
        _err(
            "index_not_found_exception",
            "no such index [orders]",
            404,
            index="orders",
            **{"resource.type": "index_or_alias", "resource.id": "orders"},
            index_uuid="_na_",
        ),
        {},
        NF,
        None,
        "index_not_found_exception",
    ),
    (
        "no_doc",
        404,
        {"_index": "orders", "_id": "1", "found": False},
        {},
        NF,
        None,
        "document not found (found: false)",
    ),
    (
        "rejected",
        429,
        _err(
            "rejected_execution_exception",
            "rejected execution of coordinating operation [coordinating_and_primary_bytes=0, "
            "replica_bytes=0, all_bytes=0, coordinating_operation_bytes=108, "
            "max_coordinating_and_primary_bytes=107]",
            429,
        ),
        {},
        RL,
        None,
        "the node's queue is full: back off and retry",
    ),
    (
        "circuit_breaker",
        429,
        _err(
            "circuit_breaking_exception",
            "[parent] Data too large, data for [<http_request>] would be [1031036224/983.2mb], "
            "which is larger than the limit of [986061209/940.3mb]",
            429,
            bytes_wanted=1031036224,
            bytes_limit=986061209,
            durability="TRANSIENT",
        ),
        {},
        RL,
        None,
        "a TRANSIENT circuit breaker (429): memory pressure, retry later",
    ),
    (
        "server_error",
        500,
        _err("null_pointer_exception", 'Cannot invoke "Object.hashCode()"', 500),
        {},
        NET,
        None,
        "the cluster failed (5xx)",
    ),
    (
        "unavailable",
        503,
        _err(
            "cluster_block_exception",
            "blocked by: [SERVICE_UNAVAILABLE/1/state not recovered / initialized];",
            503,
        ),
        {},
        NET,
        None,
        "cluster not recovered yet: 503, retry later",
    ),
    (
        "gateway_timeout",
        504,
        "<html><body><h1>504 Gateway Time-out</h1></body></html>",
        {"Content-Type": "text/html"},
        TO,
        None,
        "the proxy in front of the cluster timed out",
    ),
]
http_cases(FAM, _get, GET_ROWS)

http_cases(
    FAM,
    _create_index,
    [
        (
            "index_exists",
            400,
            _err(
                "resource_already_exists_exception",
                "index [orders/kK9qE7pVQ0e9sXn0kGm2Lw] already exists",
                400,
                index_uuid="kK9qE7pVQ0e9sXn0kGm2Lw",
                index="orders",
            ),
            {},
            EXISTS,
            None,
            "creating an index that exists (a 400 whose type says so)",
        ),
        (
            "bad_settings",
            400,
            _err(
                "illegal_argument_exception",
                "Failed to parse value [0] for setting [index.number_of_shards] must be >= 1",
                400,
            ),
            {},
            INT,
            None,
            "invalid index settings: the pack's input is wrong",
        ),
    ],
    transport=False,
)

http_cases(
    FAM,
    _create_doc,
    [
        (
            "doc_exists",
            409,
            _err(
                "version_conflict_engine_exception",
                "[1]: version conflict, document already exists (current version [1])",
                409,
                index="orders",
                shard="0",
                index_uuid="kK9qE7pVQ0e9sXn0kGm2Lw",
            ),
            {},
            EXISTS,
            None,
            "op_type=create on an existing id",
        ),
        (
            "too_large",
            413,
            "",
            {},
            INT,
            None,
            "body larger than http.max_content_length: the same request never passes",
        ),
    ],
    transport=False,
)

http_cases(
    FAM,
    _search,
    [
        (
            "bad_query",
            400,
            _err("parsing_exception", "unknown query [match_al]", 400, line=1, col=20),
            {},
            INT,
            None,
            "malformed query DSL",
        ),
    ],
    transport=False,
)
