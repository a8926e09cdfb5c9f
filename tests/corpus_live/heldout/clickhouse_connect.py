"""clickhouse-connect against a fake ClickHouse HTTP interface answering its exception texts
(``Code: N. DB::Exception: ...`` and ``X-ClickHouse-Exception-Code``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from corpus_live.core import AUTH, EXISTS, INT, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family("clickhouse-connect", "fake ClickHouse HTTP interface", http_setup, half="heldout")


def _call(url: str) -> Any:
    import clickhouse_connect

    u = urlsplit(url)
    client = clickhouse_connect.get_client(
        host=u.hostname,
        port=u.port,
        username="app",
        password="app-pw",
        connect_timeout=1,
        send_receive_timeout=1,
        query_retries=0,
    )
    return client.query("SELECT * FROM events")


def _row(
    id: str, status: int, number: int, name: str, text: str, expect: frozenset[str], why: str
) -> Row:
    body = (
        f"Code: {number}. DB::Exception: {text}. ({name}) (version 24.3.1.2672 (official build))\n"
    )
    return (id, status, body, {"X-ClickHouse-Exception-Code": str(number)}, expect, None, why)


ROWS: list[Row] = [
    _row(
        "auth",
        516,
        516,
        "AUTHENTICATION_FAILED",
        "app: Authentication failed: password is incorrect, or there is no user with such name",
        AUTH,
        "wrong password",
    ),
    _row(
        "auth_403",
        403,
        516,
        "AUTHENTICATION_FAILED",
        "app: Authentication failed: password is incorrect, or there is no user with such name",
        AUTH,
        "wrong password (403)",
    ),
    _row(
        "no_table",
        404,
        60,
        "UNKNOWN_TABLE",
        "Table default.events does not exist",
        NF,
        "no such table",
    ),
    _row(
        "no_db",
        404,
        81,
        "UNKNOWN_DATABASE",
        "Database analytics does not exist",
        NF,
        "no such database",
    ),
    _row(
        "access",
        500,
        497,
        "ACCESS_DENIED",
        "app: Not enough privileges. To execute this query, it's necessary to have the grant SELECT(id) ON default.events",
        AUTH,
        "not enough privileges",
    ),
    _row(
        "readonly",
        500,
        164,
        "READONLY",
        "app: Cannot execute query in readonly mode",
        AUTH | INT,
        "readonly user",
    ),
    _row(
        "syntax",
        400,
        62,
        "SYNTAX_ERROR",
        "Syntax error: failed at position 1 ('SELEC')",
        INT,
        "syntax error",
    ),
    _row(
        "timeout",
        500,
        159,
        "TIMEOUT_EXCEEDED",
        "Timeout exceeded: elapsed 30.0 seconds, maximum: 30",
        TO,
        "query timeout",
    ),
    _row(
        "too_many",
        500,
        202,
        "TOO_MANY_SIMULTANEOUS_QUERIES",
        "Too many simultaneous queries. Maximum: 100",
        RL,
        "too many simultaneous queries",
    ),
    _row(
        "quota",
        500,
        201,
        "QUOTA_EXCEEDED",
        "Quota for user `app` for 3600s has been exceeded: queries = 1001/1000. Interval will end at 2026-01-01 01:00:00",
        RL | frozenset({"quota_exhausted"}),
        "per-interval quota",
    ),
    _row(
        "memory",
        500,
        241,
        "MEMORY_LIMIT_EXCEEDED",
        "Memory limit (for query) exceeded: would use 10.00 GiB",
        INT,
        "query too big for memory",
    ),
    _row(
        "table_exists",
        500,
        57,
        "TABLE_ALREADY_EXISTS",
        "Table default.events already exists",
        EXISTS,
        "table exists",
    ),
    _row(
        "no_column",
        404,
        47,
        "UNKNOWN_IDENTIFIER",
        "Missing columns: 'ghost' while processing query",
        NF | INT,
        "unknown column",
    ),
]
http_cases(FAM, _call, ROWS, content_type="text/plain")
