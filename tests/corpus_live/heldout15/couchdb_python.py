"""CouchDB-Python (PyPI ``CouchDB``, the ``couchdb`` package) as a pack uses it, against a fake
Apache CouchDB 3 on 127.0.0.1 that answers CouchDB's own JSON error documents (``error`` and
``reason``, as CouchDB's ``chttpd`` writes them), status codes and ``Server`` header. One immediate retry
(the library default ``retry_delays=[0]``) and a 2 s socket timeout."""

from __future__ import annotations

from typing import Any

import couchdb  # type: ignore[import-untyped]
from couchdb.http import Session  # type: ignore[import-untyped]

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
    "couchdb-python",
    "CouchDB-Python against a fake CouchDB 3 (its error documents)",
    http_setup,
    half="heldout15",
)

_H = {"Server": "CouchDB/3.3.3 (Erlang OTP/24)", "Cache-Control": "must-revalidate"}


def _session() -> Any:
    return Session(timeout=2, retry_delays=[0])


def _save(base: str) -> Any:
    db = couchdb.Database(f"{base}/orders", session=_session())
    db.resource.credentials = ("app", "app-pw")
    return db.save({"_id": "ord-1042", "total": 31.5, "currency": "EUR"})


def _create(base: str) -> Any:
    server = couchdb.Server(base, session=_session())
    server.resource.credentials = ("admin", "admin-pw")
    return server.create("Orders-2024")


def _e(error: str, reason: str) -> dict[str, str]:
    return {"error": error, "reason": reason}


SAVE: list[Row] = [
    (
        "bad_password",
        401,
        _e("unauthorized", "Name or password is incorrect."),
        _H,
        AUTH,
        None,
        "basic auth refused",
    ),
    (
        "not_a_member",
        403,
        _e("forbidden", "You are not allowed to access this db."),
        _H,
        AUTH,
        None,
        "the user is not in the database's members",
    ),
    (
        "validate_doc_update",
        403,
        _e("forbidden", "Only the billing role may write orders."),
        _H,
        AUTH | INT,
        None,
        "the design document's validate_doc_update rejects the write",
    ),
    (
        "no_database",
        404,
        _e("not_found", "Database does not exist."),
        _H,
        NF,
        None,
        "the orders database is missing",
    ),
    (
        "update_conflict",
        409,
        _e("conflict", "Document update conflict."),
        _H,
        EXISTS | INT,
        None,
        "the document exists and no _rev was given",
    ),
    (
        "too_large",
        413,
        _e("document_too_large", "ord-1042"),
        _H,
        INT | QUOTA,
        None,
        "document above max_document_size",
    ),
    (
        "bad_json",
        400,
        _e("bad_request", "invalid UTF-8 JSON"),
        _H,
        INT,
        None,
        "the server could not parse the request body",
    ),
    (
        "server_error",
        500,
        {"error": "unknown_error", "reason": "function_clause", "ref": 1763420512},
        _H,
        INT,
        None,
        "an Erlang crash inside the node",
    ),
]

CREATE: list[Row] = [
    (
        "db_exists",
        412,
        _e("file_exists", "The database could not be created, the file already exists."),
        _H,
        EXISTS,
        None,
        "create of a database that already exists",
    ),
    (
        "illegal_db_name",
        400,
        _e(
            "illegal_database_name",
            "Name: 'Orders-2024'. Only lowercase characters (a-z), digits (0-9), and any of the "
            "characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.",
        ),
        _H,
        INT,
        None,
        "create with a name CouchDB rejects",
    ),
    (
        "create_not_admin",
        401,
        _e("unauthorized", "You are not a server admin."),
        _H,
        AUTH,
        None,
        "database creation needs a server admin",
    ),
]

http_cases(FAM, _save, SAVE)
http_cases(FAM, _create, CREATE, transport=False)
