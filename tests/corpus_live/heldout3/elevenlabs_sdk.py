"""elevenlabs (ElevenLabs' Python SDK, Fern-generated) against a fake ElevenLabs API
answering its documented error bodies (``{"detail": {"status": "quota_exceeded", "message":
...}}``): the ``status`` word says what the HTTP status does not (a quota on 401)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, QUOTA, RL, Row, family, http_cases, http_setup

FAM = family("elevenlabs", "fake ElevenLabs API", http_setup, half="heldout3")

_NO_RETRY = {"max_retries": 0, "timeout_in_seconds": 1}


def _client(url: str) -> Any:
    from elevenlabs.client import ElevenLabs

    return ElevenLabs(api_key="sk_PLANTED_elevenlabs_key", base_url=url, timeout=1)


def _speak(url: str) -> Any:
    audio = _client(url).text_to_speech.convert(
        "JBFqnCBsd6RMkjVDRZzb",
        text="Hello there.",
        model_id="eleven_multilingual_v2",
        request_options=_NO_RETRY,
    )
    return b"".join(audio)


def _voice(url: str) -> Any:
    return _client(url).voices.get("nosuchvoice0000000", request_options=_NO_RETRY)


def _d(status: str, message: str) -> dict[str, Any]:
    return {"detail": {"status": status, "message": message}}


SPEAK: list[Row] = [
    (
        "invalid_key",
        401,
        _d("invalid_api_key", "Invalid API key"),
        {},
        AUTH,
        None,
        "the API key is invalid",
    ),
    (
        "missing_permission",
        401,
        _d(
            "missing_permissions",
            "The API key you used is missing the permission text_to_speech to execute this "
            "operation.",
        ),
        {},
        AUTH,
        None,
        "the key lacks the text_to_speech permission",
    ),
    (
        "quota_exceeded",
        401,
        _d(
            "quota_exceeded",
            "This request exceeds your quota of 10000. You have 12 credits remaining, while 350 "
            "credits are required for this request.",
        ),
        {},
        QUOTA,
        None,
        "a 401 that is not about the key: the plan's credits are used up",
    ),
    (
        "unusual_activity",
        401,
        _d(
            "detected_unusual_activity",
            "Unusual activity detected. Free Tier usage disabled. If you are using a proxy/VPN "
            "you might need to purchase a Paid Plan to not trigger our abuse detectors.",
        ),
        {},
        AUTH,
        None,
        "the free tier is disabled for this account",
    ),
    (
        "concurrency",
        429,
        _d(
            "too_many_concurrent_requests",
            "Too many concurrent requests. Your current subscription is associated with a "
            "maximum of 2 concurrent requests running in parallel.",
        ),
        {},
        RL,
        None,
        "the subscription's concurrency limit",
    ),
    (
        "system_busy",
        429,
        _d(
            "system_busy",
            "Our services are experiencing high levels of traffic and your request could not be "
            "processed.",
        ),
        {},
        RL | NET,
        None,
        "ElevenLabs is overloaded: retry later",
    ),
    (
        "validation",
        422,
        {
            "detail": [
                {"loc": ["body", "text"], "msg": "field required", "type": "value_error.missing"}
            ]
        },
        {},
        INT,
        None,
        "the request is invalid (the pack's input)",
    ),
    (
        "text_too_long",
        400,
        _d(
            "max_character_limit_exceeded",
            "You are sending 12000 characters. The maximum for this model is 10000 characters.",
        ),
        {},
        INT,
        None,
        "the text is over the model's limit: it never passes",
    ),
    (
        "internal",
        500,
        _d("internal_server_error", "An internal server error occurred."),
        {},
        NET,
        None,
        "ElevenLabs failed",
    ),
]
http_cases(FAM, _speak, SPEAK)
http_cases(
    FAM,
    _voice,
    [
        (
            "voice_not_found",
            404,
            _d("voice_not_found", "A voice with voice_id nosuchvoice0000000 does not exist."),
            {},
            NF,
            None,
            "the voice id does not exist",
        )
    ],
    transport=False,
)
