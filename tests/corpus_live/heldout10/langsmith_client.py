"""langsmith (LangSmith's observability and evaluation API for LLM applications, over
requests) through its ``Client`` against a fake LangSmith API on 127.0.0.1 (``api_url``,
urllib3's retries off with ``Retry(total=0)``, a 1 s ``timeout_ms``, no background
batching, its server ``info`` given). Errors are
LangSmith's FastAPI ``{"detail": ...}`` bodies and its gateway's ``{"error": ...}`` ones;
the client turns them into ``LangSmithAuthError``, ``LangSmithNotFoundError``,
``LangSmithConflictError``, ``LangSmithRateLimitError``, ``LangSmithAPIError`` (500),
``LangSmithUserError`` or a bare ``LangSmithError``, wraps requests' connection errors in
``LangSmithConnectionError`` and lets requests' ``ReadTimeout`` through. Faked: the
LangSmith API; real: the client, requests and urllib3."""

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
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("langsmith", "fake LangSmith API", http_setup, half="heldout10")

_KEY = "PLANTEDlsv2_pt_4f8a1c9e3b7d42e6a0c5f19b8d3e7a21_6c0e2b9f41"
_DATASET = "9d3a6c1e-2b7f-4e85-a0d4-6f1c8b2e5a93"


def _client(url: str) -> Any:
    from langsmith import Client
    from urllib3.util.retry import Retry

    # ``info`` given: the client skips its background ``GET /info`` probe of the server.
    return Client(
        api_url=url,
        api_key=_KEY,
        retry_config=Retry(total=0),
        timeout_ms=1000,
        auto_batch_tracing=False,
        info={},
    )


def _read(url: str) -> Any:
    return _client(url).read_dataset(dataset_id=_DATASET)


def _create(url: str) -> Any:
    return _client(url).create_dataset("support-triage-evals", description="triage evals")


READ: list[Row] = [
    (
        "bad_key",
        401,
        {"error": "Unauthorized"},
        {},
        AUTH,
        None,
        "the API key is unknown or was revoked",
    ),
    (
        "forbidden",
        403,
        {"error": "Forbidden"},
        {},
        AUTH,
        None,
        "the key's role may not read datasets in this workspace",
    ),
    (
        "org_scoped_key",
        403,
        {"error": "org_scoped_key_requires_workspace"},
        {},
        AUTH | INT,
        None,
        "an organization-scoped key was given without a workspace",
    ),
    (
        "no_dataset",
        404,
        {"detail": "Dataset not found"},
        {},
        NF,
        None,
        "no dataset with that id in the workspace",
    ),
    (
        "throttled",
        429,
        {"detail": "Too many requests"},
        {"Retry-After": "10"},
        RL,
        None,
        "the workspace's request rate is exceeded",
    ),
    (
        "server_error",
        500,
        {"detail": "Internal server error"},
        {},
        NET,
        None,
        "LangSmith failed",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad "
        "Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the load balancer in front of LangSmith has no healthy backend",
    ),
]
http_cases(FAM, _read, READ)

CREATE: list[Row] = [
    (
        "name_taken",
        409,
        {"detail": "Dataset with this name already exists."},
        {},
        EXISTS,
        None,
        "a dataset with that name already exists in the workspace",
    ),
    (
        "usage_limit",
        429,
        {"detail": "Monthly unique traces usage limit exceeded"},
        {},
        QUOTA | RL,
        None,
        "the organization's monthly usage limit is reached",
    ),
    (
        "invalid_body",
        422,
        {
            "detail": [
                {
                    "type": "string_too_long",
                    "loc": ["body", "description"],
                    "msg": "String should have at most 2048 characters",
                }
            ]
        },
        {},
        INT,
        None,
        "the request body fails validation (the pack's input)",
    ),
]
http_cases(FAM, _create, CREATE, transport=False)


def _no_id(ctx: Http) -> Any:
    return _client(ctx.http.url).read_dataset()


FAM.add("no_id", INT, "neither a dataset name nor an id: the client refuses", _no_id)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: _read(f"http://127.0.0.1:{c.net.garbage}"),
)
