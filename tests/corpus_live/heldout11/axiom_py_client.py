"""axiom-py (Axiom's Python client for its log and event store, over requests) against a fake
Axiom API on 127.0.0.1 (``url``). The client mounts an ``HTTPAdapter`` that retries 5xx with a
2 s backoff and sets no timeout: the cases mount their own adapter (no retries, a 1 s timeout),
as a caller who needs a bounded call does. Axiom answers errors as ``{"code", "message"}``, rate
limits as 429 with the ``X-RateLimit-Scope/-Limit/-Remaining/-Reset`` headers (the reset in epoch
seconds), and the monthly ingest and query allowances as its non-standard 430 with
``X-IngestLimit-*`` or ``X-QueryLimit-*`` (as Axiom's own Go, JS and Rust clients read them). The
client's response hook raises ``AxiomError`` for every status from 400. Faked: the API; real:
axiom-py and requests."""

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
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("axiom-py", "fake Axiom API", http_setup, half="heldout11")

_TOKEN = "xaat-PLANTED0b7c5d1e-2f3a-4b6c-8d9e-0a1b2c3d4e5f"


def _client(url: str) -> Any:
    import axiom_py  # type: ignore[import-untyped]
    from requests.adapters import HTTPAdapter

    class Bounded(HTTPAdapter):
        def send(self, request: Any, **kw: Any) -> Any:  # type: ignore[override]
            kw["timeout"] = 1
            return super().send(request, **kw)

    client = axiom_py.Client(token=_TOKEN, url=url)
    client.session.mount("http://", Bounded(max_retries=0))
    return client


def _get(url: str) -> Any:
    return _client(url).datasets.get("web-logs")


def _create(url: str) -> Any:
    return _client(url).datasets.create("web-logs", "nginx access logs")


def _ingest(url: str) -> Any:
    events = [{"_time": "2026-11-29T19:00:00Z", "status": 502, "path": "/checkout"}]
    return _client(url).ingest_events("web-logs", events)


def _query(url: str) -> Any:
    return _client(url).apl_query("['web-logs'] | where status >= 500 | count")


def _e(code: int, message: str) -> dict[str, Any]:
    return {"code": code, "message": message}


GET: list[Row] = [
    ("bad_token", 401, _e(401, "invalid token"), {}, AUTH, None, "the API token is wrong"),
    (
        "no_permission",
        403,
        _e(403, "Forbidden"),
        {},
        AUTH,
        None,
        "the token has no read access to the dataset",
    ),
    ("no_dataset", 404, _e(404, "dataset not found"), {}, NF, None, "the dataset does not exist"),
    (
        "server_error",
        500,
        _e(500, "internal server error"),
        {},
        NET,
        None,
        "Axiom failed",
    ),
]
http_cases(FAM, _get, GET)

GET_HTML: list[Row] = [
    (
        "bad_gateway_html",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad"
        " Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {},
        NET,
        None,
        "the load balancer answered its own HTML page",
    ),
]
http_cases(FAM, _get, GET_HTML, content_type="text/html", transport=False)

CREATE: list[Row] = [
    ("exists", 409, _e(409, "entity exists"), {}, EXISTS, None, "the dataset already exists"),
    (
        "bad_name",
        400,
        _e(400, "invalid dataset name: must match ^[a-zA-Z0-9._-]+$"),
        {},
        INT,
        None,
        "the caller's dataset name is refused",
    ),
    (
        "dataset_limit",
        403,
        _e(403, "dataset limit reached for your plan"),
        {},
        QUOTA | AUTH,
        None,
        "the plan allows no more datasets",
    ),
]
http_cases(FAM, _create, CREATE, transport=False)


def _epoch(seconds: float) -> str:
    return str(round(time.time() + seconds))


@FAM.case(
    "ingest_allowance",
    QUOTA,
    "HTTP 430: the organization's monthly ingest allowance is used up (reset at month end)",
)
def _ingest_allowance(ctx: Http) -> Any:
    ctx.http.set(
        430,
        _e(430, "ingest limit exceeded"),
        {
            "X-IngestLimit-Limit": "536870912000",
            "X-IngestLimit-Remaining": "0",
            "X-IngestLimit-Reset": _epoch(12 * 86400),
        },
    )
    return _ingest(ctx.http.url)


@FAM.case(
    "query_allowance",
    QUOTA,
    "HTTP 430: the organization's monthly query allowance is used up (reset at month end)",
)
def _query_allowance(ctx: Http) -> Any:
    ctx.http.set(
        430,
        _e(430, "query limit exceeded"),
        {
            "X-QueryLimit-Limit": "10000000000",
            "X-QueryLimit-Remaining": "0",
            "X-QueryLimit-Reset": _epoch(12 * 86400),
        },
    )
    return _query(ctx.http.url)


@FAM.case(
    "rate_limited",
    RL,
    "HTTP 429: the user's request rate limit, the reset in X-RateLimit-Reset (epoch seconds)",
    retry_after=3.0,
)
def _rate_limited(ctx: Http) -> Any:
    ctx.http.set(
        429,
        _e(429, "rate limit exceeded"),
        {
            "X-RateLimit-Scope": "user",
            "X-RateLimit-Limit": "600",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": _epoch(3),
        },
    )
    return _query(ctx.http.url)
