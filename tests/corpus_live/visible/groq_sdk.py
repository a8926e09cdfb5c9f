"""The Groq SDK (an LLM SDK) against a fake Groq API answering its error bodies."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, QUOTA, RL, TO, Row, family, http_cases, http_setup

FAM = family("groq", "fake Groq OpenAI-compatible API", http_setup, half="visible")


def _call(url: str) -> Any:
    import groq

    client = groq.Groq(base_url=url, api_key="gsk_PLANTED", max_retries=0, timeout=1)
    return client.chat.completions.create(
        model="llama-x", messages=[{"role": "user", "content": "hi"}]
    )


def _e(message: str, type_: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "code": code}}


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _e("Invalid API Key", "invalid_request_error", "invalid_api_key"),
        {},
        AUTH,
        None,
        "invalid key",
    ),
    (
        "forbidden",
        403,
        _e("Forbidden", "permission_error"),
        {},
        AUTH,
        None,
        "organization lacks access",
    ),
    (
        "no_model",
        404,
        _e(
            "The model `llama-x` does not exist or you do not have access to it.",
            "invalid_request_error",
            "model_not_found",
        ),
        {},
        NF,
        None,
        "no such model",
    ),
    (
        "tpm",
        429,
        _e(
            "Rate limit reached for model `llama-x` on tokens per minute (TPM): Limit 6000, Used 5990. Please try again in 7.5s.",
            "tokens",
            "rate_limit_exceeded",
        ),
        {"retry-after": "8"},
        RL,
        8.0,
        "tokens per minute",
    ),
    (
        "rpd",
        429,
        _e("Rate limit reached on requests per day (RPD)", "requests", "rate_limit_exceeded"),
        {"retry-after": "120"},
        RL,
        120.0,
        "requests per day",
    ),
    (
        "too_large",
        413,
        _e(
            "Request too large for model `llama-x` on tokens per minute (TPM): Limit 6000, Requested 9000",
            "tokens",
            "rate_limit_exceeded",
        ),
        {},
        INT,
        None,
        "a request larger than the limit can never pass",
    ),
    (
        "context",
        400,
        _e(
            "Please reduce the length of the messages or completion.",
            "invalid_request_error",
            "context_length_exceeded",
        ),
        {},
        INT,
        None,
        "context too long",
    ),
    (
        "bad_request",
        400,
        _e("'messages' : value must be an array", "invalid_request_error"),
        {},
        INT,
        None,
        "bad request",
    ),
    (
        "unprocessable",
        422,
        _e("Unprocessable Entity", "invalid_request_error"),
        {},
        INT,
        None,
        "semantically invalid",
    ),
    (
        "quota",
        429,
        _e(
            "You exceeded your current quota, please check your plan and billing details.",
            "insufficient_quota",
            "insufficient_quota",
        ),
        {},
        QUOTA,
        None,
        "account quota",
    ),
    (
        "server",
        500,
        _e("Internal Server Error", "internal_server_error"),
        {},
        NET,
        None,
        "server error",
    ),
    ("gateway", 502, "<html>Bad Gateway</html>", {}, NET, None, "bad gateway"),
    (
        "overloaded",
        503,
        _e("Service Unavailable", "service_unavailable"),
        {},
        NET,
        None,
        "overloaded",
    ),
    ("gw_timeout", 504, "", {}, TO, None, "gateway timeout"),
    (
        "flex_capacity",
        498,
        _e(
            "Flex tier capacity exceeded. This is a known issue, try again later.",
            "capacity_exceeded",
        ),
        {},
        RL | NET,
        None,
        "capacity exceeded, retry later",
    ),
]
http_cases(FAM, _call, ROWS)
