"""deepgram-sdk (Deepgram's speech-to-text SDK, Fern-generated) against a fake Deepgram API
answering its documented error bodies (``{"err_code": "ASR_PAYMENT_REQUIRED", "err_msg": ...,
"request_id": ...}``)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, QUOTA, RL, Row, family, http_cases, http_setup

FAM = family("deepgram", "fake Deepgram API", http_setup, half="heldout3")


def _transcribe(url: str) -> Any:
    from deepgram import DeepgramClient
    from deepgram.environment import DeepgramClientEnvironment

    env = DeepgramClientEnvironment(base=url, production=url, agent=url, agent_rest=url)
    client = DeepgramClient(
        api_key="PLANTED0deepgram0key00000000000000000000",
        environment=env,
        timeout=1,
        max_retries=0,
    )
    return client.listen.v1.media.transcribe_url(
        url="https://media.example.org/calls/2024-11-02.wav", model="nova-3"
    )


def _e(code: str, message: str) -> dict[str, str]:
    return {
        "err_code": code,
        "err_msg": message,
        "request_id": "3b6b6cf1-6b3e-4b0b-9d0b-1b8d0c2c7a10",
    }


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _e("INVALID_AUTH", "Invalid credentials."),
        {},
        AUTH,
        None,
        "the API key is invalid",
    ),
    (
        "permissions",
        403,
        _e("INSUFFICIENT_PERMISSIONS", "User does not have sufficient permissions."),
        {},
        AUTH,
        None,
        "the key's scopes do not cover transcription",
    ),
    (
        "no_credits",
        402,
        _e(
            "ASR_PAYMENT_REQUIRED",
            "Project does not have enough credits for an ASR request and does not have an "
            "overage agreement.",
        ),
        {},
        QUOTA,
        None,
        "the project's credits are used up",
    ),
    (
        "too_many",
        429,
        _e("TOO_MANY_REQUESTS", "Too many requests. Please try again later"),
        {},
        RL,
        None,
        "the project's concurrency limit",
    ),
    (
        "media_not_found",
        400,
        _e(
            "REMOTE_CONTENT_ERROR",
            "The remote server hosting the media returned a client error: 404 Not Found.",
        ),
        {},
        NF | INT,
        None,
        "the media URL the pack gave does not exist (a 404 reported inside a 400)",
    ),
    (
        "corrupt_audio",
        400,
        _e("Bad Request", "Bad Request: failed to process audio: corrupt or unsupported data"),
        {},
        INT,
        None,
        "the audio cannot be decoded: no retry helps",
    ),
    (
        "no_model",
        400,
        _e(
            "INVALID_QUERY_PARAMETER",
            "No such model/language/tier combination found. Use the /v1/models endpoint to see "
            "the available options.",
        ),
        {},
        INT | NF,
        None,
        "the model requested does not exist for that language (the pack's input)",
    ),
    (
        "internal",
        500,
        _e("INTERNAL_SERVER_ERROR", "An internal server error occurred."),
        {},
        NET,
        None,
        "Deepgram failed",
    ),
    (
        "unavailable",
        503,
        "<html><body>503 Service Temporarily Unavailable</body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "Deepgram is unavailable (an HTML page)",
    ),
]
http_cases(FAM, _transcribe, ROWS)
