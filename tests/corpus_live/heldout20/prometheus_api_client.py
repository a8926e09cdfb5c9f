"""prometheus-api-client (a requests client of the Prometheus HTTP API): its
``PrometheusConnect`` runs a PromQL instant query against a fake Prometheus on 127.0.0.1
answering the errors Prometheus and the proxies in front of it send: Prometheus' own
``{"status": "error", "errorType": ..., "error": ...}`` bodies (``bad_data`` for a query
that does not parse, ``execution`` for one over the sample limit, ``timeout`` and
``unavailable`` with 503), the basic-auth ``Unauthorized`` of its web config, the plain
``404 page not found`` of an unknown path, a remote-read backend's tenant rate limit, a
server not yet ready and a proxy's page; plus the client's own timeout and the transport
failures. The client's urllib3 retries are off (``Retry(total=0)``); the client raises one
``PrometheusApiClientException`` with the status and raw body for every answer but 200."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
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

FAM = family("prometheus-api-client", "fake Prometheus HTTP API", http_setup, half="heldout20")


def _query(url: str) -> Any:
    from prometheus_api_client import PrometheusConnect
    from urllib3.util.retry import Retry

    prom = PrometheusConnect(
        url=url,
        headers={"Authorization": "Basic UExBTlRFRGFkbWluOlBMQU5URURwdzd4cQ=="},
        retry=Retry(total=0, raise_on_status=False),
        timeout=1,
    )
    try:
        return prom.custom_query('sum(rate(http_requests_total{job="checkout"}[5m]))')
    finally:
        prom.close()


def _e(type: str, error: str) -> dict[str, Any]:
    return {"status": "error", "errorType": type, "error": error}


_TEXT = {"Content-Type": "text/plain; charset=utf-8"}

ROWS: list[Row] = [
    (
        "unauthorized",
        401,
        "Unauthorized\n",
        {**_TEXT, "WWW-Authenticate": 'Basic realm="Prometheus"'},
        AUTH,
        None,
        "the web config's basic auth rejects the user and password",
    ),
    (
        "forbidden",
        403,
        "Forbidden\n",
        _TEXT,
        AUTH,
        None,
        "the proxy in front of Prometheus denies this user the query API",
    ),
    (
        "unknown_path",
        404,
        "404 page not found\n",
        _TEXT,
        NF,
        None,
        "no API at this path (a wrong route prefix)",
    ),
    (
        "bad_data",
        400,
        _e(
            "bad_data",
            'invalid parameter "query": 1:36: parse error: unexpected "}" in label matching, '
            "expected string",
        ),
        {},
        INT,
        None,
        "errorType bad_data: the PromQL does not parse (the caller's input)",
    ),
    (
        "too_many_samples",
        422,
        _e(
            "execution",
            "query processing would load too many samples into memory in query execution",
        ),
        {},
        INT,
        None,
        "errorType execution: the query exceeds the server's max-samples limit",
    ),
    (
        "query_timeout",
        503,
        _e("timeout", "query timed out in expression evaluation"),
        {},
        TO | NET,
        None,
        "errorType timeout: the query ran past the server's query timeout",
    ),
    (
        "canceled",
        503,
        _e("canceled", "query was canceled in query queue"),
        {},
        NET,
        None,
        "errorType canceled: the server dropped the queued query",
    ),
    (
        "not_ready",
        503,
        "Service Unavailable",
        _TEXT,
        NET,
        None,
        "the server is still replaying its write-ahead log and not ready",
    ),
    (
        "tenant_rate_limited",
        429,
        "the request has been rejected because the tenant exceeded the request rate limit, "
        "set to 10 requests/s across all distributors with a maximum allowed burst of 20 "
        "(err-mimir-tenant-max-request-rate)\n",
        {**_TEXT, "Retry-After": "2"},
        RL,
        2.0,
        "the Prometheus-compatible backend throttles this tenant; Retry-After says when",
    ),
    (
        "internal",
        500,
        _e("internal", "expanding series: opening block: no such file or directory"),
        {},
        NET,
        None,
        "errorType internal: the storage failed while evaluating",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
        "</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the reverse proxy reached no Prometheus (an HTML page)",
    ),
]
http_cases(FAM, _query, ROWS)
