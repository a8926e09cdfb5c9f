"""appwrite (Appwrite's backend-as-a-service server SDK, a requests client): its
``TablesDB`` service creates a row against a fake Appwrite API on 127.0.0.1 answering the
errors Appwrite sends (``{"message", "code", "type", "version"}`` bodies, the ``type`` one of
Appwrite's code words such as ``row_already_exists``) with their statuses and rate-limit
headers: an API key missing a scope, an invalid JWT, an unknown project, a disabled API,
an unknown table and database, a row id already taken, an invalid row structure and
argument, rate limits (the reset an epoch second), a server error and a proxy's page; plus
the transport failures and a peer answering garbage. The client raises one
``AppwriteException`` for every failure (the transport's wrapped); it sets no timeout of
its own, so no silent-server case."""

from __future__ import annotations

import time
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    RL,
    UNRESOLVABLE,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("appwrite", "fake Appwrite API", http_setup, half="heldout20")


def _create(url: str) -> Any:
    from appwrite.client import Client
    from appwrite.services.tables_db import TablesDB

    client = Client()
    client.set_endpoint(f"{url}/v1")
    client.set_project("PLANTEDproj7k3m")
    client.set_key("standard_PLANTEDq2m9x7w1k3v5b8n1c4d6e8f0")
    return TablesDB(client).create_row(
        database_id="shop",
        table_id="orders",
        row_id="order-A-99812",
        data={"total": 145000, "status": "paid"},
    )


def _e(code: int, type: str, message: str) -> dict[str, Any]:
    return {"message": message, "code": code, "type": type, "version": "1.8.0"}


ROWS: list[Row] = [
    (
        "missing_scope",
        401,
        _e(
            401,
            "general_unauthorized_scope",
            "app.PLANTEDproj7k3m@service.cloud.appwrite.io (role: applications) "
            "missing scope (rows.write)",
        ),
        {},
        AUTH,
        None,
        "general_unauthorized_scope: the API key lacks the rows.write scope",
    ),
    (
        "jwt_invalid",
        401,
        _e(
            401,
            "user_jwt_invalid",
            "The JWT token is invalid. Please check the value of the X-Appwrite-JWT header "
            "to ensure the correct token is being used.",
        ),
        {},
        AUTH,
        None,
        "user_jwt_invalid: the JWT is invalid or expired",
    ),
    (
        "user_unauthorized",
        401,
        _e(
            401,
            "user_unauthorized",
            "The current user is not authorized to perform the requested action.",
        ),
        {},
        AUTH,
        None,
        "user_unauthorized: the table's permissions do not let this user create rows",
    ),
    (
        "project_missing",
        404,
        _e(
            404,
            "project_not_found",
            "Project with the requested ID could not be found. Please check the value of the "
            "X-Appwrite-Project header to ensure the correct project ID is being used.",
        ),
        {},
        NF,
        None,
        "project_not_found: no project with this id",
    ),
    (
        "api_disabled",
        403,
        _e(
            403,
            "general_api_disabled",
            "The requested API is disabled. You can enable the API from the Appwrite console.",
        ),
        {},
        AUTH,
        None,
        "general_api_disabled: the project has the REST API turned off",
    ),
    (
        "table_missing",
        404,
        _e(404, "table_not_found", "Table with the requested ID could not be found."),
        {},
        NF,
        None,
        "table_not_found: the table does not exist",
    ),
    (
        "database_missing",
        404,
        _e(404, "database_not_found", "Database not found"),
        {},
        NF,
        None,
        "database_not_found: the database does not exist",
    ),
    (
        "row_exists",
        409,
        _e(
            409,
            "row_already_exists",
            "Row with the requested ID already exists. Try again with a different ID or use "
            "ID.unique() to generate a unique ID.",
        ),
        {},
        EXISTS,
        None,
        "row_already_exists: a row with this id exists",
    ),
    (
        "invalid_structure",
        400,
        _e(
            400,
            "row_invalid_structure",
            'Invalid document structure: Unknown attribute: "totl"',
        ),
        {},
        INT,
        None,
        "row_invalid_structure: the data does not fit the table's columns (the caller's input)",
    ),
    (
        "argument_invalid",
        400,
        _e(
            400,
            "general_argument_invalid",
            "Invalid `rowId` param: Parameter must contain at most 36 chars. Valid chars are "
            "a-z, A-Z, 0-9, period, hyphen, and underscore. Can't start with a special char",
        ),
        {},
        INT,
        None,
        "general_argument_invalid: the row id is not a valid id (the caller's input)",
    ),
    (
        "server_error",
        500,
        _e(500, "general_unknown", "Server Error"),
        {},
        NET,
        None,
        "general_unknown: the server failed",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        "<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the edge reached no Appwrite worker (an HTML page)",
    ),
]
http_cases(FAM, _create, ROWS, transport=False)


@FAM.case(
    "rate_limited",
    RL,
    "HTTP 429: general_rate_limit_exceeded; the reset is an epoch second in X-RateLimit-Reset",
    retry_after=3.0,
)
def _rate_limited(ctx: Http) -> Any:
    ctx.http.set(
        429,
        _e(
            429,
            "general_rate_limit_exceeded",
            "Rate limit for the current endpoint has been exceeded. Please try again after "
            "some time.",
        ),
        {
            "X-RateLimit-Limit": "120",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(int(time.time()) + 3),
        },
    )
    return _create(ctx.http.url)


FAM.add("refused", NET, "nothing listens", lambda c: _create(f"http://{LOOPBACK}:{c.net.closed}"))
FAM.add("dns", NET, "host does not resolve", lambda c: _create(f"http://{UNRESOLVABLE}:80"))
FAM.add("dropped", NET, "closed at once", lambda c: _create(f"http://{LOOPBACK}:{c.net.close_now}"))


@FAM.case("garbage", NET, "the peer answers bytes of no protocol instead of HTTP")
def _garbage(c: Http) -> Any:
    return _create(f"http://{LOOPBACK}:{c.net.garbage}")
