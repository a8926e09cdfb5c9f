"""cartesia (Cartesia's Python SDK, a Stainless client on httpx; here its asyncio client)
against a fake Cartesia API answering its error bodies (``{error_code, title, message,
doc_url, request_id}``) and statuses: 401, 402 credits used up, 403, 400 and 422 bad input,
404 an unknown voice, 429 concurrency limit, 500, a proxy's HTML 502, 503; plus the SDK's own
timeout and the transport failures. The SDK's retries are turned off."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
    run_async,
)

FAM = family("cartesia", "fake Cartesia API", http_setup, half="heldout16")

_VOICE = "a0e99841-438c-4a64-b679-ae501e7d6091"


def _client(url: str) -> Any:
    from cartesia import AsyncCartesia

    return AsyncCartesia(
        api_key="sk_car_PLANTEDcartesiakey", base_url=url, timeout=1.0, max_retries=0
    )


async def _speak(url: str) -> Any:
    async with _client(url) as client:
        return await client.tts.generate(
            model_id="sonic-2",
            transcript="Your order has shipped and will arrive on Tuesday.",
            voice={"mode": "id", "id": _VOICE},
            output_format={"container": "wav", "encoding": "pcm_s16le", "sample_rate": 44100},
        )


def _call(url: str) -> Any:
    return run_async(_speak(url))


def _err(status: int, code: str, title: str, message: str) -> Any:
    return {
        "error_code": code,
        "title": title,
        "message": message,
        "doc_url": f"https://docs.cartesia.ai/api-reference/errors#{code}",
        "request_id": f"req_01JF3{status}PLANTED8Q2W",
    }


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _err(401, "invalid_api_key", "Unauthorized", "Invalid API key."),
        {},
        AUTH,
        None,
        "the API key is not valid",
    ),
    (
        "out_of_credits",
        402,
        _err(
            402,
            "insufficient_credits",
            "Payment Required",
            "You have used all of your credits for this billing period. Upgrade your plan "
            "to continue.",
        ),
        {},
        QUOTA,
        None,
        "the account's credits are used up",
    ),
    (
        "plan_forbids_model",
        403,
        _err(
            403,
            "forbidden",
            "Forbidden",
            "Your plan does not include access to this feature.",
        ),
        {},
        AUTH,
        None,
        "the key's plan may not use this model",
    ),
    (
        "bad_output_format",
        400,
        _err(
            400,
            "invalid_request",
            "Bad Request",
            "invalid output format: sample_rate 44100 is not supported for container wav "
            "with encoding pcm_s16le",
        ),
        {},
        INT,
        None,
        "the output format is not valid (the caller's input)",
    ),
    (
        "transcript_too_long",
        422,
        _err(
            422,
            "validation_error",
            "Unprocessable Entity",
            "transcript: must be at most 10000 characters",
        ),
        {},
        INT,
        None,
        "the transcript fails validation (the caller's input)",
    ),
    (
        "concurrency_limit",
        429,
        _err(
            429,
            "concurrency_limit_exceeded",
            "Too Many Requests",
            "You have exceeded the concurrency limit for your plan. Please wait for your "
            "in-flight requests to finish.",
        ),
        {},
        RL,
        None,
        "too many generations in flight for the plan",
    ),
    (
        "internal",
        500,
        _err(500, "internal_server_error", "Internal Server Error", "Something went wrong."),
        {},
        NET,
        None,
        "Cartesia failed",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        "<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the proxy in front of the API got no answer",
    ),
    (
        "overloaded",
        503,
        _err(
            503,
            "service_unavailable",
            "Service Unavailable",
            "The service is temporarily overloaded. Please try again shortly.",
        ),
        {},
        NET,
        None,
        "the API is overloaded",
    ),
]
http_cases(FAM, _call, ROWS)


async def _voice(url: str) -> Any:
    async with _client(url) as client:
        return await client.voices.get("5c43e078-5ba4-4e1f-9639-8d85a403f76a")


def _voice_missing(ctx: Http) -> Any:
    ctx.http.set(
        404,
        _err(404, "voice_not_found", "Not Found", "Voice not found."),
    )
    return run_async(_voice(ctx.http.url))


FAM.add("voice_not_found", NF, "HTTP 404: the voice does not exist", _voice_missing)
