"""together (Together AI's Python SDK) against a fake Together API answering its documented
error bodies (``{"error": {"message", "type", "param", "code"}}``) and statuses: 401 invalid
key, 402 spending limit reached, 403 prompt over the context length, 404 unknown model, 429
with ``x-ratelimit-*`` and ``retry-after``, 503 engine overloaded, 524 a Cloudflare timeout."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, QUOTA, RL, TO, Row, family, http_cases, http_setup

FAM = family("together", "fake Together AI API", http_setup, half="heldout4")


def _chat(url: str) -> Any:
    from together import Together

    client = Together(api_key="tgp_v1_PLANTEDtogetherkey", base_url=url, max_retries=0, timeout=1)
    return client.chat.completions.create(
        model="meta-llama/Llama-3.3-70B-Instruct-Turbo",
        messages=[{"role": "user", "content": "hello"}],
    )


def _e(
    message: str, type: str, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    return {
        "id": "nxQ3mBv-4Yz4kd-8f1b2c3d4e5f6a7b",
        "error": {"message": message, "type": type, "param": param, "code": code},
    }


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _e(
            "Invalid API key provided. You can find your API key at https://api.together.xyz/settings/api-keys.",
            "invalid_request_error",
            "invalid_api_key",
        ),
        {},
        AUTH,
        None,
        "the API key is invalid",
    ),
    (
        "spending_limit",
        402,
        _e(
            "Credit limit exceeded. Please navigate to https://api.together.xyz/settings/billing to add credit or upgrade your plan.",
            "invalid_request_error",
            "credit_limit",
        ),
        {},
        QUOTA,
        None,
        "the account's credit is used up: waiting a minute does not help",
    ),
    (
        "context_too_long",
        403,
        _e(
            "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8193. Given: 9120 `inputs` tokens and 512 `max_new_tokens`",
            "invalid_request_error",
        ),
        {},
        INT,
        None,
        "the prompt is over the model's context (Together answers it with 403): it never passes",
    ),
    (
        "unknown_model",
        404,
        _e(
            "Unable to access model meta-llama/Llama-3.3-70B-Instruct-Turbo. Please visit https://api.together.ai/models to view the list of supported models.",
            "invalid_request_error",
            "model_not_available",
            "model",
        ),
        {},
        NF,
        None,
        "the model does not exist or is not served",
    ),
    (
        "rate_limited",
        429,
        _e(
            "You are on tier Build Tier 1, which offers 10 queries per second for this model. Please upgrade to higher tier for higher rate limit at https://api.together.xyz/settings/billing.",
            "rate_limit",
            "rate_limit_exceeded",
        ),
        {
            "retry-after": "2",
            "x-ratelimit-limit": "10",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": "2",
        },
        RL,
        2.0,
        "the tier's per-second limit, with the server's delay",
    ),
    (
        "overloaded",
        503,
        _e("The server is overloaded or not ready yet.", "server_error", "engine_overloaded"),
        {},
        NET,
        None,
        "the model's engine is overloaded",
    ),
    (
        "internal",
        500,
        _e("Internal server error", "server_error"),
        {},
        NET,
        None,
        "Together failed",
    ),
    (
        "cloudflare_timeout",
        524,
        "<!DOCTYPE html><html><head><title>api.together.xyz | 524: A timeout occurred</title></head><body>Error code 524</body></html>",
        {"Content-Type": "text/html; charset=UTF-8", "Server": "cloudflare"},
        TO | NET,
        None,
        "Cloudflare's origin timeout page",
    ),
    (
        "bad_request",
        400,
        _e(
            "temperature must be a non-negative number",
            "invalid_request_error",
            None,
            "temperature",
        ),
        {},
        INT,
        None,
        "a malformed parameter (the pack's input)",
    ),
]
http_cases(FAM, _chat, ROWS)
