"""langfuse (Langfuse, LLM observability; its public-API client ``langfuse.api`` is generated
by Fern on httpx): the async ``AsyncLangfuseAPI`` creates an evaluation dataset against a fake
Langfuse server on 127.0.0.1 answering the errors Langfuse sends (``{"error", "message"}``
bodies, ``error`` the server's error class: ``UnauthorizedError``, ``ForbiddenError``,
``LangfuseNotFoundError``, ``InvalidRequestError`` with zod issues) with their statuses and
headers: wrong keys, a public key used where the secret key is needed, a project deleted, a
plan's usage cap, the caller's invalid input, a body too large, a method not allowed, rate
limits with ``Retry-After``, a server error and a gateway page; plus the client's own timeout
and the transport failures. Fern's retries are off (``request_options={"max_retries": 0}``)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
    run_async,
)

FAM = family("langfuse", "fake Langfuse server (public API)", http_setup, half="heldout21")


async def _create_async(url: str) -> Any:
    from langfuse.api.client import AsyncLangfuseAPI

    api = AsyncLangfuseAPI(
        base_url=url,
        username="pk-lf-PLANTED-7c1e9a42",
        password="sk-lf-PLANTED-3b8d06f1",
        timeout=1.0,
    )
    return await api.datasets.create(
        name="support-answers-golden",
        description="Golden answers for the support agent",
        metadata={"owner": "evals"},
        request_options={"max_retries": 0},
    )


def _create(url: str) -> Any:
    return run_async(_create_async(url))


def _e(error: str, message: str) -> dict[str, Any]:
    return {"error": error, "message": message}


ROWS: list[Row] = [
    (
        "unauthorized",
        401,
        _e(
            "UnauthorizedError",
            "Invalid credentials. Confirm that you've configured the correct host.",
        ),
        {},
        AUTH,
        None,
        "UnauthorizedError: the key pair is wrong or belongs to another region's host",
    ),
    (
        "public_key_only",
        403,
        _e(
            "ForbiddenError",
            "Access denied - need to use basic auth with secret key to POST /api/public/v2/"
            "datasets",
        ),
        {},
        AUTH,
        None,
        "ForbiddenError: the call was authorized with the public key alone",
    ),
    (
        "project_missing",
        404,
        _e("LangfuseNotFoundError", "Project not found"),
        {},
        NF,
        None,
        "LangfuseNotFoundError: the keys' project was deleted",
    ),
    (
        "usage_cap",
        403,
        _e(
            "ForbiddenError",
            "Usage threshold exceeded. Your organization has exceeded the included units of its "
            "current plan; upgrade to continue.",
        ),
        {},
        QUOTA | AUTH,
        None,
        "ForbiddenError: the organization's plan's usage threshold is exceeded",
    ),
    (
        "invalid_request",
        400,
        {
            "message": "Invalid request data",
            "error": [
                {
                    "code": "too_small",
                    "minimum": 1,
                    "type": "string",
                    "inclusive": True,
                    "exact": False,
                    "message": "String must contain at least 1 character(s)",
                    "path": ["name"],
                }
            ],
        },
        {},
        INT,
        None,
        "InvalidRequestError: zod rejected the body (the caller's input)",
    ),
    (
        "too_large",
        413,
        "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n"
        "<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>"
        "\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        INT,
        None,
        "the body is over the proxy's size limit (an HTML page)",
    ),
    (
        "method_not_allowed",
        405,
        _e("MethodNotAllowedError", "Method not allowed"),
        {"Allow": "GET"},
        INT,
        None,
        "MethodNotAllowedError: the route does not take this method (an old self-hosted build)",
    ),
    (
        "rate_limited",
        429,
        _e("TooManyRequestsError", "Rate limit exceeded"),
        {
            "Retry-After": "9",
            "X-RateLimit-Limit": "1000",
            "X-RateLimit-Remaining": "0",
        },
        RL,
        9.0,
        "the project's public-API rate limit is spent; Retry-After says when",
    ),
    (
        "internal",
        500,
        _e("InternalServerError", "Internal Server Error"),
        {},
        NET,
        None,
        "the server failed",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 "
        "Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the load balancer got no valid answer from the web container (an HTML page)",
    ),
]
http_cases(FAM, _create, ROWS)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol instead of HTTP",
    lambda c: _create(f"http://{LOOPBACK}:{c.net.garbage}"),
)
