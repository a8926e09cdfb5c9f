"""sambanova (SambaNova Cloud's Stainless-generated SDK, its sync ``SambaNova`` client over
httpx) against a fake SambaNova Cloud API (``/v1``) on 127.0.0.1 (``base_url`` pointed at
it, ``max_retries=0`` so each request is sent once, a 1 s timeout). SambaNova answers errors
in OpenAI's shape (``{"error": {message, type, param, code}}``) plus a ``request_id``, with the
status and error codes of its API error-code reference (400 for an unknown model or a
too-long context, 408 when inference ran too long, 410 for a retired model, 429 for the
tier's rate limit, 503 for maintenance). The client raises one ``APIStatusError`` subclass
per status, ``APIConnectionError``/``APITimeoutError`` for the transport. Faked: the API;
real: the client and httpx."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family("sambanova", "fake SambaNova Cloud API", http_setup, half="heldout13")

_RID = "2a8b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"


def _chat(url: str) -> Any:
    from sambanova import SambaNova

    client = SambaNova(
        api_key="PLANTED-snova-4b7e1c9a-2d3f-4e5a-8b6c",
        base_url=url + "/v1",
        max_retries=0,
        timeout=1.0,
    )
    return client.chat.completions.create(
        model="Meta-Llama-3.3-70B-Instruct",
        messages=[{"role": "user", "content": "Summarise the incident report."}],
        top_p=0.9,
    )


def _err(message: str, type: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": type, "param": param, "code": code},
        "request_id": _RID,
    }


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _err("Invalid API key", "authentication_error", "invalid_authentication"),
        {},
        AUTH,
        None,
        "the API key is wrong or was deleted",
    ),
    (
        "unknown_model",
        400,
        _err(
            "Model not found: Meta-Llama-3.3-70B-Instruct",
            "invalid_request_error",
            "model_not_found",
            "model",
        ),
        {},
        NF | INT,
        None,
        "the caller named a model id that does not exist",
    ),
    (
        "context_too_long",
        400,
        _err(
            "Requested generation length 4096 is not possible! The provided prompt is 129024"
            " tokens long, so generating 4096 tokens requires a sequence length of 133120, but"
            " the maximum supported sequence length is just 131072!",
            "invalid_request_error",
            "context_length_exceeded",
            "max_tokens",
        ),
        {},
        INT,
        None,
        "the caller's prompt plus output exceed the model's context",
    ),
    (
        "param_out_of_range",
        400,
        _err(
            "Decimal above maximum value. Expected a value between 0 and 1, but got 100 instead.",
            "invalid_request_error",
            "decimal_above_max_value",
            "top_p",
        ),
        {},
        INT,
        None,
        "the caller's sampling parameter is out of range",
    ),
    (
        "inference_timeout",
        408,
        _err(
            "Request timed out. Please try again with a smaller request.",
            "timeout_error",
            "request_timeout",
        ),
        {},
        TO,
        None,
        "the server stopped an inference that ran too long",
    ),
    (
        "model_retired",
        410,
        _err(
            "The model Meta-Llama-3.3-70B-Instruct has been deprecated and is no longer available.",
            "invalid_request_error",
            "model_deprecated",
            "model",
        ),
        {},
        NF,
        None,
        "the model was removed from the service",
    ),
    (
        "rate_limited",
        429,
        _err(
            "Rate limit exceeded for requests per minute. Please slow down your requests.",
            "rate_limit_error",
            "rate_limit_exceeded",
        ),
        {},
        RL,
        None,
        "the tier's requests-per-minute limit, no delay given",
    ),
    (
        "maintenance",
        503,
        _err(
            "The model is temporarily unavailable due to maintenance. Please try again later.",
            "server_error",
            "service_unavailable",
        ),
        {},
        NET,
        None,
        "the model is down for maintenance, no delay given",
    ),
    (
        "server_error",
        500,
        _err("Something went wrong. Please try again later.", "server_error", None),
        {},
        NET,
        None,
        "SambaNova failed while serving the request",
    ),
]
http_cases(FAM, _chat, ROWS)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: _chat(f"http://127.0.0.1:{c.net.garbage}"),
)
