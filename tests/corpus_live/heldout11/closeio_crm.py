"""closeio (Close CRM's Python client over requests) against a fake Close API on 127.0.0.1
(``API(base_url)``, ``max_retries=1`` so its loop sends each request once, a 1 s timeout per
call). Close answers errors as ``{"error": "..."}``, validation failures as HTTP 400 with
``{"errors": [...], "field-errors": {...}}``, and rate limits as 429 with the ``RateLimit``
header (``limit=, remaining=, reset=``) and an ``error`` object carrying ``rate_reset``; the
client sleeps that reset before giving up. It raises ``ValidationError`` for 400 and
``APIError`` for every other failing status; requests' errors for the transport. Faked: the
API; real: the client and requests."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family("closeio", "fake Close CRM API", http_setup, half="heldout11")

_LEAD = "lead_7QmXbT2kZ9rVn4cHsW1pLd8yEaF3uGjK5oRi6MtB0Nq"


def _api(url: str) -> Any:
    from closeio_api import API  # type: ignore[import-untyped]

    return API(url + "/api/v1/", api_key="api_PLANTEDclose3f1c9d7e2b5a4068", max_retries=1)


def _get(url: str) -> Any:
    return _api(url).get("lead/" + _LEAD, timeout=1)


def _post(url: str) -> Any:
    lead = {"name": "Example Corp", "contacts": [{"name": "Ada", "emails": [{"email": "ada@"}]}]}
    return _api(url).post("lead", lead, timeout=1)


GET: list[Row] = [
    (
        "bad_key",
        401,
        {"error": "Unauthorized"},
        {"WWW-Authenticate": 'Basic realm="api"'},
        AUTH,
        None,
        "the API key is wrong or deleted",
    ),
    (
        "no_permission",
        403,
        {"error": "You don't have permission to perform this action."},
        {},
        AUTH,
        None,
        "the user's role may not read this lead",
    ),
    (
        "lead_not_found",
        404,
        {"error": "Empty query: Lead matching query does not exist."},
        {},
        NF,
        None,
        "the lead does not exist",
    ),
    (
        "server_error",
        500,
        {"error": "Internal server error"},
        {},
        NET,
        None,
        "Close failed",
    ),
]
http_cases(FAM, _get, GET)

POST: list[Row] = [
    (
        "invalid_email",
        400,
        {
            "errors": [],
            "field-errors": {
                "contacts": {"0": {"emails": {"0": {"email": "Invalid email address."}}}}
            },
        },
        {},
        INT,
        None,
        "the caller's contact email is refused",
    ),
    (
        "missing_status",
        400,
        {"errors": ["Lead status 'stat_unknown' does not exist."], "field-errors": {}},
        {},
        INT | NF,
        None,
        "the caller names a lead status that does not exist",
    ),
    (
        "rate_limited",
        429,
        {
            "error": {
                "rate_reset": 1.0,
                "message": "API call count exceeded for this 1 second window",
                "rate_limit": 40,
                "rate_window": 1,
                "rate_limit_type": "key",
            }
        },
        {"RateLimit": "limit=40, remaining=0, reset=1"},
        RL,
        1.0,
        "the key's request rate is over its limit, with the server's delay",
    ),
    (
        "too_large",
        413,
        {"error": "Request entity too large."},
        {},
        INT,
        None,
        "the caller's payload is over the size limit",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad"
        " Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the load balancer answered its own page (POST is not retried)",
    ),
    (
        "gateway_timeout",
        504,
        "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504"
        " Gateway Time-out</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        TO | NET,
        None,
        "the backend did not answer the load balancer in time",
    ),
]
http_cases(FAM, _post, POST, transport=False)
