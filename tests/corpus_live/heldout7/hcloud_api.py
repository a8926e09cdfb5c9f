"""hcloud (Hetzner Cloud's official Python library, over requests) against a fake Hetzner Cloud
API on 127.0.0.1 (``api_endpoint=``, ``timeout=1``; the pack turns the library's own retries
off, since it would sleep out a ``rate_limit_exceeded``, a 502/504 or a timeout up to five
times inside the handler): errors are Hetzner's documented ``{"error": {"code", "message",
"details"}}`` bodies with its codes (``unauthorized``, ``forbidden``, ``token_readonly``,
``not_found``, ``uniqueness_error``, ``invalid_input``, ``resource_limit_exceeded``,
``locked``, ``rate_limit_exceeded`` with the ``RateLimit-*`` headers, ``server_error``,
``unavailable``, ``maintenance``) and an ``X-Correlation-Id``. The library raises
``hcloud.APIException`` carrying the error's code and message only (never the status nor
the headers: a 429's reset is lost), or, when the body is no JSON, the status and reason;
the transport raises requests' exceptions."""

from __future__ import annotations

import time
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
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("hcloud", "fake Hetzner Cloud API", http_setup, half="heldout7")

_H = {"X-Correlation-Id": "8c7a3d0e2f1b4a69"}


def _client(url: str) -> Any:
    from hcloud import Client

    client = Client(
        token="PLANTEDhcloudTok3nQ8mD1oYvXk2sN7aB4cD5eF6gH7iJ8kL9", api_endpoint=url, timeout=1
    )
    client._client._retry_max_retries = 0  # no in-handler sleeps on 429/502/504/timeouts
    return client


def _get_server(url: str) -> Any:
    return _client(url).servers.get_by_id(4711)


def _create_server(url: str) -> Any:
    from hcloud.images import Image
    from hcloud.server_types import ServerType

    return _client(url).servers.create(
        name="web-1", server_type=ServerType(name="cx22"), image=Image(name="debian-12")
    )


def _err(code: str, message: str, details: Any = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


GET: list[Row] = [
    (
        "unauthorized",
        401,
        _err("unauthorized", "unable to authenticate"),
        _H,
        AUTH,
        None,
        "the API token is unknown or revoked",
    ),
    (
        "forbidden",
        403,
        _err("forbidden", "insufficient permissions for this request"),
        _H,
        AUTH,
        None,
        "the token may not access this resource",
    ),
    (
        "not_found",
        404,
        _err("not_found", "server with ID '4711' not found"),
        _H,
        NF,
        None,
        "no server with that id in the project",
    ),
    (
        "server_error",
        500,
        _err("server_error", "Error within the API backend"),
        _H,
        NET,
        None,
        "Hetzner's API failed",
    ),
    (
        "maintenance",
        503,
        _err("maintenance", "Cannot perform operation due to maintenance"),
        _H,
        NET,
        None,
        "the API is in maintenance",
    ),
]
http_cases(FAM, _get_server, GET)

CREATE: list[Row] = [
    (
        "token_readonly",
        403,
        _err("token_readonly", "The token is only allowed to perform GET requests"),
        _H,
        AUTH,
        None,
        "a read-only token tried to create a server",
    ),
    (
        "name_taken",
        409,
        _err("uniqueness_error", "server name is already used", {"fields": [{"name": "name"}]}),
        _H,
        EXISTS,
        None,
        "a server named web-1 already exists in the project",
    ),
    (
        "invalid_input",
        400,
        _err(
            "invalid_input",
            "invalid input in field 'server_type'",
            {"fields": [{"name": "server_type", "messages": ["server type cx22 not found"]}]},
        ),
        _H,
        INT,
        None,
        "the create body names a server type that does not exist (the pack's input)",
    ),
    (
        "server_limit",
        403,
        _err(
            "resource_limit_exceeded",
            "server limit exceeded",
            {"limits": [{"name": "server_limit"}]},
        ),
        _H,
        QUOTA,
        None,
        "the project's server limit is reached",
    ),
    (
        "locked",
        423,
        _err("locked", "server is locked"),
        _H,
        INT | NET,
        None,
        "another action holds the resource",
    ),
]
http_cases(FAM, _create_server, CREATE, transport=False)


def _rate_limited(ctx: Http) -> Any:
    headers = {
        **_H,
        "RateLimit-Limit": "3600",
        "RateLimit-Remaining": "0",
        "RateLimit-Reset": str(int(time.time()) + 4),
    }
    ctx.http.set(
        429, _err("rate_limit_exceeded", "limit of 3600 requests per hour reached"), headers
    )
    return _get_server(ctx.http.url)


FAM.add(
    "rate_limited",
    RL,
    "HTTP 429: the project's hourly request budget (the reset, a UNIX time in RateLimit-Reset, "
    "does not reach the exception)",
    _rate_limited,
)


def _gateway_timeout(ctx: Http) -> Any:
    ctx.http.set(
        504,
        "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n"
        "</body></html>\n",
        {},
        "text/html",
    )
    return _get_server(ctx.http.url)


FAM.add(
    "gateway_timeout",
    TO | NET,
    "HTTP 504: the load balancer timed out (an HTML page)",
    _gateway_timeout,
)
