"""cerebras-cloud-sdk (Cerebras Inference's Python SDK) against a fake Cerebras API answering
its documented error bodies (a flat ``{"message", "type", "param", "code"}``): 401
``wrong_api_key``, 404 ``model_not_found``, 429 ``token_quota_exceeded`` (a per-minute token
limit, despite the word *quota*) and ``queue_exceeded`` with the ``x-ratelimit-reset-*``
headers, 422 a context too long, 5xx."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("cerebras", "fake Cerebras Inference API", http_setup, half="heldout4")


def _chat(url: str) -> Any:
    from cerebras.cloud.sdk import Cerebras

    client = Cerebras(
        api_key="csk-PLANTEDcerebraskey",
        base_url=url,
        max_retries=0,
        timeout=1,
        warm_tcp_connection=False,
    )
    return client.chat.completions.create(
        model="llama-3.3-70b", messages=[{"role": "user", "content": "hello"}]
    )


def _e(message: str, type: str, param: str | None, code: str | None) -> dict[str, Any]:
    return {"message": message, "type": type, "param": param, "code": code}


ROWS: list[Row] = [
    (
        "wrong_key",
        401,
        _e("Wrong API Key", "invalid_request_error", "api_key", "wrong_api_key"),
        {},
        AUTH,
        None,
        "the API key is wrong",
    ),
    (
        "model_not_found",
        404,
        _e(
            "Model llama-3.3-70b does not exist or you do not have access to it.",
            "not_found_error",
            "model",
            "model_not_found",
        ),
        {},
        NF,
        None,
        "the model does not exist",
    ),
    (
        "tokens_per_minute",
        429,
        _e(
            "Tokens per minute limit exceeded - too many tokens processed.",
            "too_many_tokens_error",
            "quota",
            "token_quota_exceeded",
        ),
        {
            "x-ratelimit-limit-tokens-minute": "60000",
            "x-ratelimit-remaining-tokens-minute": "0",
            "x-ratelimit-reset-tokens-minute": "17.5",
        },
        RL,
        None,
        "a per-minute token limit: waiting works (the reset is in a vendor header)",
    ),
    (
        "queue_exceeded",
        429,
        _e(
            "We're experiencing high traffic right now! Please try again soon.",
            "too_many_requests_error",
            "queue",
            "queue_exceeded",
        ),
        {"retry-after": "3"},
        RL,
        3.0,
        "the shared queue is full, with the server's delay",
    ),
    (
        "context_too_long",
        422,
        _e(
            "Please reduce the length of the messages or completion. Current length is 9012 "
            "while limit is 8192",
            "invalid_request_error",
            "messages",
            "context_length_exceeded",
        ),
        {},
        INT,
        None,
        "the prompt is over the context: it never passes",
    ),
    (
        "permission",
        403,
        _e(
            "You do not have permission to access this model.",
            "permission_denied_error",
            "model",
            "permission_denied",
        ),
        {},
        AUTH,
        None,
        "the key's organization may not use the model",
    ),
    (
        "internal",
        500,
        _e("Internal server error", "server_error", None, "internal_error"),
        {},
        NET,
        None,
        "Cerebras failed",
    ),
    (
        "unavailable",
        503,
        _e("Service temporarily unavailable", "server_error", None, "service_unavailable"),
        {},
        NET,
        None,
        "Cerebras is unavailable",
    ),
]
http_cases(FAM, _chat, ROWS)
