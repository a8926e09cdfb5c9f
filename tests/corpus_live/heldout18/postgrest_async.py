"""postgrest (Supabase's PostgREST client, its async client ``AsyncPostgrestClient``, httpx
underneath) against a fake PostgREST 12 on 127.0.0.1 answering PostgREST's error bodies
(``{"code", "details", "hint", "message"}``: its own ``PGRST...`` codes and PostgreSQL's
SQLSTATEs) with the statuses PostgREST maps them to and its ``WWW-Authenticate`` header:
an expired or malformed JWT, a role without the privilege, a missing table, unique and
foreign-key violations, bad input, a statement timeout, a database PostgREST cannot reach,
a pool that gave up; plus the client's own timeout and the transport failures. The
client's retries are off (``retry_enabled=False``)."""

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
    TO,
    Row,
    family,
    http_cases,
    http_setup,
    run_async,
)

FAM = family("postgrest", "fake PostgREST", http_setup, half="heldout18")


async def _insert_async(url: str) -> Any:
    from postgrest import AsyncPostgrestClient

    async with AsyncPostgrestClient(
        f"{url}/rest/v1",
        headers={"apikey": "PLANTED-anon-key", "Authorization": "Bearer PLANTED.jwt.token"},
        timeout=1,
        retry_enabled=False,
    ) as client:
        return await client.from_("orders").insert({"id": 4711, "customer_id": 17}).execute()


def _insert(url: str) -> Any:
    return run_async(_insert_async(url))


def _e(code: str, message: str, details: str | None = None, hint: str | None = None) -> Any:
    return {"code": code, "details": details, "hint": hint, "message": message}


def _www(desc: str) -> dict[str, str]:
    return {"WWW-Authenticate": f'Bearer error="invalid_token", error_description="{desc}"'}


ROWS: list[Row] = [
    (
        "jwt_expired",
        401,
        _e("PGRST303", "JWT expired"),
        _www("JWT expired"),
        AUTH,
        None,
        "the bearer token has expired",
    ),
    (
        "jwt_bad_signature",
        401,
        _e("PGRST301", "JWSError JWSInvalidSignature"),
        _www("JWSError JWSInvalidSignature"),
        AUTH,
        None,
        "the token was signed with another secret",
    ),
    (
        "anon_denied",
        401,
        _e("42501", "permission denied for table orders"),
        {},
        AUTH,
        None,
        "the anonymous role may not write the table",
    ),
    (
        "rls_denied",
        403,
        _e("42501", 'new row violates row-level security policy for table "orders"'),
        {},
        AUTH,
        None,
        "a row-level security policy refuses the row",
    ),
    (
        "no_table",
        404,
        _e(
            "PGRST205",
            "Could not find the table 'public.orders' in the schema cache",
            None,
            "Perhaps you meant the table 'public.order'",
        ),
        {},
        NF,
        None,
        "the table does not exist",
    ),
    (
        "duplicate_key",
        409,
        _e(
            "23505",
            'duplicate key value violates unique constraint "orders_pkey"',
            "Key (id)=(4711) already exists.",
        ),
        {},
        EXISTS,
        None,
        "a row with that key already exists",
    ),
    (
        "foreign_key",
        409,
        _e(
            "23503",
            'insert or update on table "orders" violates foreign key constraint '
            '"orders_customer_id_fkey"',
            'Key (customer_id)=(17) is not present in table "customers".',
        ),
        {},
        NF | INT,
        None,
        "the referenced customer does not exist",
    ),
    (
        "bad_input",
        400,
        _e("22P02", 'invalid input syntax for type integer: "seventeen"'),
        {},
        INT,
        None,
        "a value of the wrong type (the caller's input)",
    ),
    (
        "statement_timeout",
        500,
        _e("57014", "canceling statement due to statement timeout"),
        {},
        TO,
        None,
        "the statement ran past the role's statement_timeout",
    ),
    (
        "db_unreachable",
        503,
        _e(
            "PGRST000",
            "Database connection error. Retrying the connection.",
            'connection to server at "db" (10.0.0.5), port 5432 failed: Connection refused',
        ),
        {},
        NET,
        None,
        "PostgREST cannot reach its database",
    ),
    (
        "too_many_connections",
        503,
        _e("53300", "sorry, too many clients already"),
        {},
        NET | RL | QUOTA,
        None,
        "the database has no connection slot left",
    ),
    (
        "pool_timeout",
        504,
        _e("PGRST003", "Timed out acquiring connection from connection pool."),
        {},
        TO | NET,
        None,
        "no pooled connection became free in time",
    ),
]
http_cases(FAM, _insert, ROWS)
