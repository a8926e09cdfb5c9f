"""sarvamai (Sarvam AI's speech and language API for Indian languages, a client generated
by Fern on httpx): its sync ``SarvamAI`` client translates a sentence against a fake Sarvam
API on 127.0.0.1 answering the errors Sarvam documents (``{"error": {"message", "code",
"request_id"}}`` bodies, ``code`` one of Sarvam's words such as ``invalid_api_key_error``)
with their statuses: a wrong subscription key, a spent quota (``insufficient_quota_error``
on 429), an unknown route, a request too large, the caller's bad and unprocessable input,
a rate limit, server errors, an overloaded model and a gateway timeout; plus the client's
own timeout and the transport failures. The client's retries are off
(``request_options={"max_retries": 0}``)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
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

FAM = family("sarvamai", "fake Sarvam AI API", http_setup, half="heldout20")


def _translate(url: str) -> Any:
    from sarvamai import SarvamAI
    from sarvamai.environment import SarvamAIEnvironment

    env = SarvamAIEnvironment(base=url, creative=f"{url}/dubbing", production=url)
    client = SarvamAI(
        api_subscription_key="sk_PLANTEDq7xk2mw9_h3v5b8n1", environment=env, timeout=1
    )
    return client.text.translate(
        input="Your order has shipped and will arrive on Friday.",
        source_language_code="en-IN",
        target_language_code="hi-IN",
        request_options={"max_retries": 0},
    )


def _e(code: str, message: str) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "code": code,
            "request_id": "20261130_PLANTED-7k3m-q2x9",
        }
    }


ROWS: list[Row] = [
    (
        "invalid_key",
        403,
        _e("invalid_api_key_error", "Invalid API key or the API key does not exist."),
        {},
        AUTH,
        None,
        "invalid_api_key_error: the subscription key is wrong",
    ),
    (
        "quota_exceeded",
        429,
        _e(
            "insufficient_quota_error",
            "API usage quota exceeded for the current plan. Please upgrade your plan.",
        ),
        {},
        QUOTA,
        None,
        "insufficient_quota_error on 429: the plan's quota is spent, not a momentary limit",
    ),
    (
        "route_missing",
        404,
        {"detail": "Not Found"},
        {},
        NF,
        None,
        "no such route (a wrong base URL or retired endpoint)",
    ),
    (
        "too_large",
        413,
        _e("invalid_request_error", "Input text exceeds the maximum length of 2000 characters."),
        {},
        INT,
        None,
        "the input is over the endpoint's size limit (the caller's input)",
    ),
    (
        "bad_request",
        400,
        _e(
            "invalid_request_error",
            "Invalid target_language_code: 'hi-IN' is not supported with model 'sarvam-translate:v1' "
            "in mode 'modern-colloquial'.",
        ),
        {},
        INT,
        None,
        "invalid_request_error: an unsupported combination of parameters (the caller's input)",
    ),
    (
        "unprocessable",
        422,
        _e("unprocessable_entity_error", "Unable to detect the language of the input text."),
        {},
        INT,
        None,
        "unprocessable_entity_error: the input cannot be processed (the caller's input)",
    ),
    (
        "internal",
        500,
        _e("internal_server_error", "Internal Server Error. Please try again later."),
        {},
        NET,
        None,
        "internal_server_error: the API failed",
    ),
    (
        "overloaded",
        503,
        _e("service_unavailable_error", "The model is currently overloaded. Please retry."),
        {},
        NET,
        None,
        "the model's servers are overloaded",
    ),
    (
        "gateway_timeout",
        504,
        "<html><head><title>504 Gateway Time-out</title></head><body>"
        "<center><h1>504 Gateway Time-out</h1></center></body></html>",
        {"Content-Type": "text/html"},
        TO | NET,
        None,
        "the gateway timed out waiting for the model (an HTML page)",
    ),
]
http_cases(FAM, _translate, ROWS)


@FAM.case(
    "rate_limited",
    RL,
    "HTTP 429: rate_limit_exceeded_error, the per-minute request limit; Retry-After says when",
    retry_after=6.0,
)
def _rate_limited(ctx: Any) -> Any:
    ctx.http.set(
        429,
        _e("rate_limit_exceeded_error", "Rate limit exceeded. Please try again later."),
        {"Retry-After": "6"},
    )
    return _translate(ctx.http.url)
