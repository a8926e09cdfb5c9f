"""The Cohere SDK (an LLM SDK) against a fake Cohere v2 API answering its error bodies."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, QUOTA, RL, TO, Row, family, http_cases, http_setup

FAM = family("cohere", "fake Cohere v2 API", http_setup, half="heldout")


def _call(url: str) -> Any:
    import cohere

    client = cohere.ClientV2(api_key="co-PLANTED", base_url=url, timeout=1)
    return client.chat(
        model="command-x",
        messages=[{"role": "user", "content": "hi"}],
        request_options={"max_retries": 0},
    )


ROWS: list[Row] = [
    (
        "bad_token",
        401,
        {"id": "1", "message": "invalid api token"},
        {},
        AUTH,
        None,
        "invalid token",
    ),
    (
        "forbidden",
        403,
        {"id": "1", "message": "You are not allowed to access this resource"},
        {},
        AUTH,
        None,
        "forbidden",
    ),
    (
        "no_model",
        404,
        {
            "id": "1",
            "message": "model 'command-x' not found, make sure the correct model ID was used",
        },
        {},
        NF,
        None,
        "no such model",
    ),
    (
        "trial_limit",
        429,
        {
            "id": "1",
            "message": "You are using a Trial key, which is limited to 20 API calls / minute. You can continue to use the Trial key for free or upgrade to a Production key",
        },
        {"Retry-After": "60"},
        RL,
        60.0,
        "trial key throttled",
    ),
    ("too_many", 429, {"id": "1", "message": "too many requests"}, {}, RL, None, "throttled"),
    (
        "payment",
        402,
        {"id": "1", "message": "Please add or update your payment method to continue"},
        {},
        QUOTA,
        None,
        "payment required",
    ),
    (
        "invalid_token_498",
        498,
        {"id": "1", "message": "invalid token: the token may have expired"},
        {},
        AUTH,
        None,
        "Cohere's 498 invalid token",
    ),
    (
        "bad_request",
        400,
        {"id": "1", "message": "invalid request: message must be at least 1 token long"},
        {},
        INT,
        None,
        "bad request",
    ),
    (
        "unprocessable",
        422,
        {"id": "1", "message": "invalid request: too many tokens, max 4096"},
        {},
        INT,
        None,
        "unprocessable",
    ),
    (
        "client_closed",
        499,
        {"id": "1", "message": "request cancelled by user"},
        {},
        INT | TO | NET,
        None,
        "client closed request",
    ),
    (
        "internal",
        500,
        {"id": "1", "message": "internal server error, this has been reported to our developers"},
        {},
        NET,
        None,
        "server error",
    ),
    (
        "not_implemented",
        501,
        {"id": "1", "message": "not implemented"},
        {},
        INT,
        None,
        "not implemented",
    ),
    (
        "unavailable",
        503,
        {"id": "1", "message": "service unavailable"},
        {},
        NET,
        None,
        "unavailable",
    ),
    ("gw_timeout", 504, {"id": "1", "message": "gateway timeout"}, {}, TO, None, "gateway timeout"),
]
http_cases(FAM, _call, ROWS)
