"""zep-cloud (Zep's agent-memory API, a Fern-generated client on httpx): its sync client
creates a user against a fake Zep API on 127.0.0.1 answering the errors Zep sends
(``{"message": ...}`` bodies) with their statuses and headers: a wrong or revoked API key,
a missing permission, an unknown project, an existing user id, the caller's bad input, a
body too large, rate limits, server errors and a gateway's pages; plus the client's own
timeout and the transport failures. The client raises one generated error class per
documented status (``UnauthorizedError``, ``ConflictError``...) and ``ApiError`` for the
others; its retries are off (``max_retries=0``), so each call is tried once."""

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

FAM = family("zep-cloud", "fake Zep API", http_setup, half="heldout19")


def _create(url: str) -> Any:
    from zep_cloud.client import Zep

    client = Zep(api_key="z_PLANTED1f8c2e7a", base_url=f"{url}/api/v2", timeout=1, max_retries=0)
    return client.user.create(user_id="cust-4127", email="jo.bloggs@example.com")


def _m(message: str) -> dict[str, Any]:
    return {"message": message}


ROWS: list[Row] = [
    ("unauthorized", 401, _m("unauthorized"), {}, AUTH, None, "the API key is wrong or revoked"),
    (
        "forbidden",
        403,
        _m("forbidden"),
        {},
        AUTH,
        None,
        "the key's project may not use this endpoint",
    ),
    ("not_found", 404, _m("not found"), {}, NF, None, "the path or project is unknown"),
    (
        "user_exists",
        409,
        _m("user with id cust-4127 already exists"),
        {},
        EXISTS,
        None,
        "a user with this id exists",
    ),
    (
        "bad_request",
        400,
        _m("invalid email address"),
        {},
        INT,
        None,
        "a field is invalid (the caller's input)",
    ),
    (
        "too_large",
        413,
        _m("request body too large"),
        {},
        INT,
        None,
        "the request body is over the size limit (the caller's input)",
    ),
    (
        "rate_limited",
        429,
        _m("rate limit exceeded"),
        {"Retry-After": "2"},
        RL,
        2.0,
        "the project's request rate is over its plan, the server says when to retry",
    ),
    ("internal", 500, _m("internal server error"), {}, NET, None, "the API failed"),
    (
        "bad_gateway",
        502,
        "error code: 502",
        {"Content-Type": "text/plain; charset=UTF-8", "CF-RAY": "8f2a6c1b9d3e4a5f-FRA"},
        NET,
        None,
        "the CDN reached no origin (Cloudflare's text)",
    ),
    (
        "origin_timeout",
        504,
        "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n"
        "<center><h1>504 Gateway Time-out</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET | TO,
        None,
        "the gateway's upstream did not answer in time (an HTML page)",
    ),
]
http_cases(FAM, _create, ROWS)
