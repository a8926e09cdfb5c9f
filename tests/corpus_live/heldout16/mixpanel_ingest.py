"""mixpanel (Mixpanel's Python library, requests underneath, its direct ``Consumer``) against
a fake Mixpanel ingestion API: the Import API's JSON errors (``{code, error, status}``, some
with ``failed_records``) and statuses (401, 400, 413, 429, 500, 503), a proxy's HTML 502, and
the ``/track`` and ``/engage`` endpoints' verbose answers (HTTP 200 with ``{"status": 0,
"error"}``); plus the library's own timeout and the transport failures. The library raises one
``MixpanelException`` carrying only the server's error text. Its retries are off."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    RL,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
    transport_cases,
)

FAM = family("mixpanel", "fake Mixpanel ingestion API", http_setup, half="heldout16")

_TOKEN = "0f3c5e2a9b7d41c8PLANTEDmixpanel"


def _mp(url: str) -> Any:
    from mixpanel import Consumer, Mixpanel  # type: ignore[import-untyped]
    from mixpanel.credentials import ServiceAccountCredentials  # type: ignore[import-untyped]

    consumer = Consumer(
        events_url=f"{url}/track",
        people_url=f"{url}/engage",
        import_url=f"{url}/import",
        request_timeout=1,
        retry_limit=0,
        credentials=ServiceAccountCredentials(
            "ingest-bot.2f1c9e.mp-service-account", "PLANTEDmixpanelsecret", "3318204"
        ),
    )
    return Mixpanel(_TOKEN, consumer=consumer)


def _import(url: str) -> Any:
    return _mp(url).import_data(
        api_key=None,
        distinct_id="user-42",
        event_name="Invoice Paid",
        timestamp=1764460800,
        properties={"amount": 129.0, "currency": "EUR"},
    )


ROWS: list[Row] = [
    (
        "bad_secret",
        401,
        {"code": 401, "error": "Invalid credentials", "status": "Unauthorized"},
        {},
        AUTH,
        None,
        "the service account's secret is wrong",
    ),
    (
        "validation_failed",
        400,
        {
            "code": 400,
            "error": "some data points in the request failed validation",
            "failed_records": [
                {
                    "index": 0,
                    "$insert_id": "",
                    "field": "properties.time",
                    "message": "'properties.time' is invalid: must be specified as seconds since epoch",
                }
            ],
            "num_records_imported": 0,
            "status": "Bad Request",
        },
        {},
        INT,
        None,
        "an event fails validation (the caller's input)",
    ),
    (
        "too_large",
        413,
        {
            "code": 413,
            "error": "request exceeds max limit of 10485760 bytes",
            "status": "Request Entity Too Large",
        },
        {},
        INT,
        None,
        "the batch is over the size limit (the caller's input)",
    ),
    (
        "rate_limited",
        429,
        {
            "code": 429,
            "error": "Project exceeded rate limits. Please retry the request with exponential backoff.",
            "status": "Too Many Requests",
        },
        {},
        RL,
        None,
        "the project's ingestion rate limit was hit",
    ),
    (
        "internal",
        500,
        {"code": 500, "error": "Internal Server Error", "status": "Internal Server Error"},
        {},
        NET,
        None,
        "Mixpanel failed",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        "<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the load balancer's HTML page, not JSON",
    ),
    (
        "unavailable",
        503,
        {
            "code": 503,
            "error": "service is temporarily unavailable, please retry",
            "status": "Service Unavailable",
        },
        {},
        NET,
        None,
        "ingestion is temporarily unavailable",
    ),
]
http_cases(FAM, _import, ROWS, transport=False)


def _track(url: str) -> Any:
    return _mp(url).track("user-42", "Signed Up", {"plan": "pro"})


transport_cases(FAM, lambda host, port: _track(f"http://{host}:{port}"), dns_port=80)


@FAM.case("track_bad_token", AUTH | INT, "HTTP 200: the project token is missing or empty")
def _bad_token(ctx: Http) -> Any:
    ctx.http.set(200, {"error": "token, missing or empty", "status": 0})
    return _track(ctx.http.url)


@FAM.case(
    "engage_no_distinct_id",
    INT,
    "HTTP 200: the profile update lacks a distinct id (the caller's input)",
)
def _no_distinct_id(ctx: Http) -> Any:
    ctx.http.set(200, {"error": "$distinct_id, missing or empty", "status": 0})
    return _mp(ctx.http.url).people_set("", {"$email": "ada@acme.example"})


FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: _track(f"http://127.0.0.1:{c.net.garbage}"),
)
