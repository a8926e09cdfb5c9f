"""aleph-alpha-client (Aleph Alpha's inference API, sync ``Client`` on requests): a completion
against a fake Aleph Alpha API on 127.0.0.1 answering the errors the API documents
(``{"error", "code"}`` bodies) with their statuses. The client maps statuses to **builtin**
exceptions (400 ``ValueError``, 401 ``PermissionError``, 408 ``TimeoutError``, other
``RuntimeError``) or its own ``QuotaError`` (402) and ``BusyError`` (503): a wrong token, a
model the token may not use, the credits exhausted, an unknown model, a prompt over the
context size, the caller's bad input, the request timed out in the worker queue, rate limits,
the queue full, a server error; plus the client's own timeout and the
transport failures. The client's urllib3 retries are off (``total_retries=0``)."""

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
    TO,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("aleph-alpha-client", "fake Aleph Alpha API", http_setup, half="heldout21")


def _complete(url: str) -> Any:
    from aleph_alpha_client import Client, CompletionRequest, Prompt

    client = Client(
        token="PLANTED.eyJ0b2tlbl9pZCI6NDIxfQ.aa",
        host=url,
        request_timeout_seconds=1,
        total_retries=0,
    )
    request = CompletionRequest(
        prompt=Prompt.from_text("Summarize the support ticket in one sentence:\n"),
        maximum_tokens=64,
    )
    return client.complete(request, model="pharia-1-llm-7b-control")


def _e(code: str, error: str) -> dict[str, Any]:
    return {"error": error, "code": code}


ROWS: list[Row] = [
    (
        "unauthenticated",
        401,
        _e("UNAUTHENTICATED", "The provided token is not valid."),
        {},
        AUTH,
        None,
        "UNAUTHENTICATED: the API token is invalid or was revoked",
    ),
    (
        "forbidden",
        403,
        _e("FORBIDDEN", "You are not allowed to use the model pharia-1-llm-7b-control."),
        {},
        AUTH,
        None,
        "FORBIDDEN: the token's user may not use this model",
    ),
    (
        "credits",
        402,
        _e(
            "NOT_ENOUGH_CREDITS",
            "You do not have enough credits to fulfill this request. Please top up your account.",
        ),
        {},
        QUOTA,
        None,
        "NOT_ENOUGH_CREDITS: the account's credits are exhausted",
    ),
    (
        "model_missing",
        404,
        _e("MODEL_NOT_FOUND", "Model 'pharia-1-llm-7b-control' not found."),
        {},
        NF,
        None,
        "MODEL_NOT_FOUND: no model of this name is deployed",
    ),
    (
        "prompt_too_long",
        400,
        _e(
            "PROMPT_TOO_LONG",
            "Prompt and maximum_tokens together exceed the model's context size of 8192 tokens.",
        ),
        {},
        INT,
        None,
        "PROMPT_TOO_LONG: the prompt plus maximum_tokens exceed the context (the caller's input)",
    ),
    (
        "invalid_input",
        400,
        _e("INVALID_INPUT", "temperature: must be between 0.0 and 2.0"),
        {},
        INT,
        None,
        "INVALID_INPUT: a parameter is out of range (the caller's input)",
    ),
    (
        "queue_timeout",
        408,
        _e(
            "TIMEOUT",
            "Processing the request took too long. The request was cancelled while waiting in "
            "the queue.",
        ),
        {},
        TO,
        None,
        "TIMEOUT: the request waited too long in the worker queue and was dropped",
    ),
    (
        "rate_limited",
        429,
        _e("TOO_MANY_REQUESTS", "Too many requests. Please try again later."),
        {},
        RL,
        None,
        "TOO_MANY_REQUESTS: the user's request rate is over the limit",
    ),
    (
        "busy",
        503,
        _e(
            "BUSY",
            "The server is currently busy. Too many requests in the queue, please try again later.",
        ),
        {},
        RL | NET,
        None,
        "BUSY: the model's queue is full (the client's BusyError); try again later",
    ),
    (
        "internal",
        500,
        _e("INTERNAL_SERVER_ERROR", "An internal server error occurred."),
        {},
        NET,
        None,
        "the API failed",
    ),
]
http_cases(FAM, _complete, ROWS)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol instead of HTTP",
    lambda c: _complete(f"http://{LOOPBACK}:{c.net.garbage}"),
)
