"""elasticsearch-py against a fake Elasticsearch answering its documented error bodies."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, EXISTS, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family(
    "elasticsearch", "fake Elasticsearch 8 (error JSON bodies)", http_setup, half="visible"
)


def _call(url: str) -> Any:
    from elasticsearch import Elasticsearch

    es = Elasticsearch(
        url, basic_auth=("elastic", "pw"), max_retries=0, retry_on_timeout=False, request_timeout=1
    )
    return es.get(index="books", id="1")


def _err(type_: str, reason: str, status: int, **extra: Any) -> dict[str, Any]:
    inner = {"type": type_, "reason": reason, **extra}
    return {"error": {"root_cause": [inner], **inner}, "status": status}


H = {"X-Elastic-Product": "Elasticsearch"}
ROWS: list[Row] = [
    (
        "index_missing",
        404,
        _err("index_not_found_exception", "no such index [books]", 404, index="books"),
        H,
        NF,
        None,
        "no such index",
    ),
    (
        "doc_missing",
        404,
        {"_index": "books", "_id": "1", "found": False},
        H,
        NF,
        None,
        "document not found",
    ),
    (
        "unauthenticated",
        401,
        _err(
            "security_exception",
            "unable to authenticate user [elastic] for REST request [/books/_doc/1]",
            401,
        ),
        {**H, "WWW-Authenticate": 'Basic realm="security"'},
        AUTH,
        None,
        "bad credentials",
    ),
    (
        "forbidden",
        403,
        _err(
            "security_exception",
            "action [indices:data/read/get] is unauthorized for user [reader] with effective roles [viewer] on indices [books]",
            403,
        ),
        H,
        AUTH,
        None,
        "unauthorized action",
    ),
    (
        "read_only_block",
        403,
        _err(
            "cluster_block_exception",
            "index [books] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index has read-only-allow-delete block];",
            429,
        ),
        H,
        RL | INT,
        None,
        "flood-stage read-only block (not a credential problem)",
    ),
    (
        "version_conflict",
        409,
        _err(
            "version_conflict_engine_exception",
            "[1]: version conflict, document already exists (current version [1])",
            409,
            index="books",
        ),
        H,
        EXISTS,
        None,
        "document already exists (op_type=create)",
    ),
    (
        "es_rejected",
        429,
        _err(
            "es_rejected_execution_exception", "rejected execution of coordinating operation", 429
        ),
        {**H, "Retry-After": "5"},
        RL,
        5.0,
        "thread pool queue full",
    ),
    (
        "circuit_breaker",
        429,
        _err(
            "circuit_breaking_exception",
            "[parent] Data too large, data for [<http_request>] would be [1024mb]",
            429,
            bytes_wanted=1,
            durability="TRANSIENT",
        ),
        H,
        RL,
        None,
        "circuit breaker, transient",
    ),
    (
        "parse_error",
        400,
        _err("parsing_exception", "unknown query [matchx]", 400, line=1, col=22),
        H,
        INT,
        None,
        "a malformed query: the pack's bug",
    ),
    (
        "mapping_error",
        400,
        _err("mapper_parsing_exception", "failed to parse field [year] of type [long]", 400),
        H,
        INT,
        None,
        "document does not fit the mapping",
    ),
    (
        "search_timeout",
        504,
        _err("search_phase_execution_exception", "all shards failed: timed out", 504),
        H,
        TO,
        None,
        "gateway timed out",
    ),
    (
        "no_master",
        503,
        _err("master_not_discovered_exception", "no master node", 503),
        H,
        NET,
        None,
        "cluster has no master",
    ),
    (
        "shards_unavailable",
        503,
        _err(
            "unavailable_shards_exception",
            "[books][0] primary shard is not active Timeout: [1m]",
            503,
        ),
        H,
        NET | TO,
        None,
        "primary shard not active",
    ),
    (
        "internal",
        500,
        _err("null_pointer_exception", 'Cannot invoke "Object.toString()"', 500),
        H,
        NET,
        None,
        "server-side failure",
    ),
    ("too_large", 413, "", H, INT, None, "request entity too large"),
]
http_cases(FAM, _call, ROWS)
