"""mistralai (the official SDK, Speakeasy-generated) against a fake Mistral API answering its
error objects (``{"object": "error", "message", "type", "param", "code": "1300"}``: numeric
codes as strings that are not HTTP statuses) and its gateway's plain ``{"message": ...}``."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family("mistralai", "fake Mistral AI API (error objects)", http_setup, half="heldout2")


def _call(url: str) -> Any:
    from mistralai.client import Mistral

    client = Mistral(api_key="PLANTED-mistral-key", server_url=url, timeout_ms=1000)
    return client.chat.complete(
        model="mistral-small-latest", messages=[{"role": "user", "content": "hi"}]
    )


def _e(message: Any, type_: str, code: str | None) -> dict[str, Any]:
    return {"object": "error", "message": message, "type": type_, "param": None, "code": code}


RID = "9f1e2c4a7b3d4e5f8a6b0c1d2e3f4a5b"

ROWS: list[Row] = [
    (
        "unauthorized",
        401,
        {"message": "Unauthorized", "request_id": RID},
        {},
        AUTH,
        None,
        "the API key is invalid (the gateway's body)",
    ),
    (
        "invalid_model",
        400,
        _e("Invalid model: mistral-small-latest", "invalid_model", "1500"),
        {},
        NF | INT,
        None,
        "a model name that does not exist (400 invalid_model): check the name, never retry",
    ),
    (
        "rate_limited",
        429,
        {"message": "Requests rate limit exceeded", "request_id": RID},
        {"Retry-After": "4", "ratelimitbysize-remaining": "0"},
        RL,
        4.0,
        "the workspace's request rate, with Retry-After",
    ),
    (
        "capacity",
        429,
        _e(
            "Service tier capacity exceeded for this model.",
            "service_tier_capacity_exceeded",
            "3505",
        ),
        {},
        RL,
        None,
        "the model's shared capacity is exhausted for now: back off and retry",
    ),
    (
        "validation",
        422,
        {
            "detail": [
                {
                    "type": "missing",
                    "loc": ["body", "messages"],
                    "msg": "Field required",
                    "input": {"model": "mistral-small-latest"},
                }
            ]
        },
        {},
        INT,
        None,
        "the request breaks the schema: the pack's bug",
    ),
    (
        "context_too_long",
        400,
        _e(
            "Prompt contains 40973 tokens and 0 draft tokens, too large for model with 32768 "
            "maximum context length",
            "invalid_request_error",
            "3051",
        ),
        {},
        INT,
        None,
        "a prompt over the model's context: the same request never passes",
    ),
    (
        "internal",
        500,
        _e("Internal server error", "internal_server_error", "3000"),
        {},
        NET,
        None,
        "Mistral failed (5xx)",
    ),
    (
        "unavailable",
        503,
        {"message": "Service unavailable.", "request_id": RID},
        {},
        NET,
        None,
        "the API is down for now",
    ),
    (
        "gateway_timeout",
        504,
        {"message": "The upstream server is timing out", "request_id": RID},
        {},
        TO,
        None,
        "the gateway's deadline passed",
    ),
]
http_cases(FAM, _call, ROWS)
