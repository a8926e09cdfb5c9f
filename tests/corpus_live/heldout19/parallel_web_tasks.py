"""parallel-web (Parallel's web-research API for AI agents, a Stainless client on httpx):
its sync client creates a task run against a fake Parallel API on 127.0.0.1 answering the
errors Parallel documents for its Task API (``{"type": "error", "error": {"ref_id",
"message", "detail"}}`` bodies) with their statuses and headers: a wrong API key, a
processor the key may not use, insufficient credit, an unknown run, the caller's bad
input, rate limits, server errors and a proxy's page; plus the client's own timeout and
the transport failures. The client's retries are off (``max_retries=0``), so each call
is tried once."""

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
)

FAM = family("parallel-web", "fake Parallel API", http_setup, half="heldout19")


def _run(url: str) -> Any:
    from parallel import Parallel

    client = Parallel(api_key="PLANTEDpar_5Hk2Lq9", base_url=url, max_retries=0, timeout=1)
    return client.task_run.create(
        input="What was the revenue of Acme Corp in 2025?", processor="base"
    )


def _e(message: str, detail: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {
            "ref_id": "c1b9f3e2-7a4d-4e8b-9c61-2f5d8a0b3e47",
            "message": message,
            "detail": detail,
        },
    }


ROWS: list[Row] = [
    ("unauthorized", 401, _e("Invalid API key."), {}, AUTH, None, "the API key is wrong"),
    (
        "missing_key",
        401,
        _e("Missing API key."),
        {},
        AUTH,
        None,
        "no API key reached the server",
    ),
    (
        "processor_forbidden",
        403,
        _e("Processor 'base' is not available for this API key."),
        {},
        AUTH,
        None,
        "the key may not use the requested processor",
    ),
    (
        "insufficient_credit",
        402,
        _e("Insufficient credit. Please add credits to your account to continue."),
        {},
        QUOTA,
        None,
        "the account has no credit left",
    ),
    ("not_found", 404, _e("Not Found"), {}, NF, None, "the endpoint or run is unknown"),
    (
        "validation",
        422,
        _e(
            "Request validation error",
            {
                "errors": [
                    {
                        "loc": ["body", "processor"],
                        "msg": "Input should be 'lite', 'base', 'core', 'pro' or 'ultra'",
                        "type": "enum",
                    }
                ]
            },
        ),
        {},
        INT,
        None,
        "a field of the request is invalid (the caller's input)",
    ),
    (
        "rate_limited",
        429,
        _e("Rate limit exceeded. Please retry after some time."),
        {"Retry-After": "1"},
        RL,
        1.0,
        "too many task runs per minute, the server says when to retry",
    ),
    ("internal", 500, _e("Internal server error."), {}, NET, None, "the API failed"),
    (
        "unavailable",
        503,
        "<html><head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n"
        "<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the proxy has no backend (an HTML page)",
    ),
]
http_cases(FAM, _run, ROWS)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: _run(f"http://{LOOPBACK}:{c.net.garbage}"),
)
