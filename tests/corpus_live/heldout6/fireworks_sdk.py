"""fireworks-ai (Fireworks AI's official SDK, Stainless-generated over httpx) against a fake
Fireworks inference API on 127.0.0.1 (``base_url=``, ``max_retries=0``: the SDK would
otherwise sleep out retries inside the handler): errors are Fireworks' OpenAI-compatible
bodies ``{"error": {"object": "error", "type", "code", "message"}}`` with the statuses its
docs list (401, 402/412 for billing, 403, 404 for a model that is not deployed, 408 when the
model produced no token before the deadline, 413, 429 with ``x-ratelimit-*`` headers and
``Retry-After``, 5xx). The SDK raises ``fireworks.AuthenticationError``,
``PermissionDeniedError``, ``NotFoundError``, ``RateLimitError``, ``InternalServerError``
or a plain ``APIStatusError`` for the statuses it does not name, and
``APIConnectionError``/``APITimeoutError`` on the transport."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, QUOTA, RL, TO, Row, family, http_cases, http_setup

FAM = family("fireworks-ai", "fake Fireworks AI inference API", http_setup, half="heldout6")


def _chat(url: str) -> Any:
    from fireworks import Fireworks

    client = Fireworks(
        api_key="fw_PLANTED3ZqfQ8mD1oYvXk2sN7", base_url=url, max_retries=0, timeout=1.0
    )
    return client.chat.completions.create(
        model="accounts/fireworks/models/llama-v3p1-8b-instruct",
        messages=[{"role": "user", "content": "Summarise the incident."}],
    )


def _err(type: str, message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"object": "error", "type": type, "code": code or type, "message": message}}


_RL = {
    "x-ratelimit-limit-requests": "600",
    "x-ratelimit-remaining-requests": "0",
    "x-ratelimit-over-limit": "yes",
    "Retry-After": "3",
}

ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _err("invalid_request_error", "The API key you provided is invalid."),
        {},
        AUTH,
        None,
        "the API key is unknown",
    ),
    (
        "out_of_credits",
        402,
        _err(
            "invalid_request_error",
            "Your account has exhausted its credits. Please add a payment method or purchase "
            "credits to continue.",
        ),
        {},
        QUOTA,
        None,
        "the account's prepaid credits are used up",
    ),
    (
        "suspended",
        412,
        _err(
            "invalid_request_error",
            "Account suspended due to billing issues. Please update your payment method.",
        ),
        {},
        QUOTA | AUTH,
        None,
        "the account is suspended for billing (Fireworks' 412)",
    ),
    (
        "forbidden",
        403,
        _err("invalid_request_error", "Permission denied: account does not have access to model"),
        {},
        AUTH,
        None,
        "the key's account may not use this model",
    ),
    (
        "no_model",
        404,
        _err(
            "invalid_request_error",
            "Model not found, inaccessible, and/or not deployed",
            "NOT_FOUND",
        ),
        {},
        NF,
        None,
        "the model is not deployed or does not exist",
    ),
    (
        "bad_request",
        400,
        _err("invalid_request_error", "max_tokens must be at least 1, got -5."),
        {},
        INT,
        None,
        "an out-of-range parameter (the pack's input)",
    ),
    (
        "too_large",
        413,
        _err(
            "invalid_request_error",
            "The prompt is too long: 140000, model maximum context length: 131072",
        ),
        {},
        INT,
        None,
        "the prompt exceeds the model's context window (the pack's input)",
    ),
    (
        "rate_limited",
        429,
        _err("rate_limit_error", "Rate limit exceeded for requests per minute.", "RATE_LIMITED"),
        _RL,
        RL,
        3.0,
        "the account's request rate, the wait in Retry-After",
    ),
    (
        "first_token_deadline",
        408,
        _err(
            "invalid_request_error",
            "Request didn't generate first token before the given deadline",
        ),
        {},
        TO,
        None,
        "the model produced no token before Fireworks' deadline",
    ),
    (
        "server_error",
        500,
        _err("internal_server_error", "Internal server error"),
        {},
        NET,
        None,
        "Fireworks failed",
    ),
    (
        "overloaded",
        503,
        _err("service_unavailable", "The server is overloaded, please try again later."),
        {},
        NET,
        None,
        "the serving fleet is overloaded",
    ),
]
http_cases(FAM, _chat, ROWS)
