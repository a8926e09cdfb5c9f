"""assemblyai (AssemblyAI's speech-to-text SDK, over httpx) through a ``Client`` built from
its own ``Settings`` (``base_url`` on 127.0.0.1, a 1 s ``http_timeout``) against a fake
AssemblyAI v2 API. Errors are AssemblyAI's ``{"error": "..."}`` bodies; the SDK raises
``TranscriptError`` (the message and ``status_code``) for every non-200 answer, httpx's
exceptions unwrapped from the transport, and ``ValueError``/``TypeError``/``OSError`` from
its own checks of what the caller passes. Faked: the AssemblyAI API; real: the SDK and
httpx."""

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
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("assemblyai", "fake AssemblyAI API", http_setup, half="heldout10")

_KEY = "PLANTEDaai9f3c1e7b52d84a6f9c0e3b7d1a5f8c2e"
_TRANSCRIPT = "5551722-f677-48a4-9fc5-1c8a9e2f0b77"
_AUDIO = "https://assembly.ai/wildfires.mp3"


def _client(url: str) -> Any:
    import assemblyai as aai

    return aai.Client(
        settings=aai.Settings(api_key=_KEY, base_url=url, http_timeout=1.0, polling_interval=0.2)
    )


def _get(url: str) -> Any:
    import assemblyai as aai

    return aai.Transcript(_TRANSCRIPT, client=_client(url)).wait_for_completion(poll_timeout=1)


def _submit(url: str, audio: Any = _AUDIO) -> Any:
    import assemblyai as aai

    return aai.Transcriber(client=_client(url)).submit(audio)


def _err(message: str) -> dict[str, str]:
    return {"error": message}


GET: list[Row] = [
    (
        "bad_key",
        401,
        _err("Authentication error, API token missing/invalid"),
        {},
        AUTH,
        None,
        "the API key is unknown or was revoked",
    ),
    (
        "no_transcript",
        404,
        _err("Transcript lookup error, transcript id not found"),
        {},
        NF,
        None,
        "no transcript with that id for this account",
    ),
    (
        "throttled",
        429,
        _err("Too Many Requests"),
        {},
        RL,
        None,
        "the account's request rate is exceeded",
    ),
    (
        "server_error",
        500,
        _err("Server error, developers have been alerted."),
        {},
        NET,
        None,
        "AssemblyAI failed",
    ),
    (
        "gateway_timeout",
        504,
        "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 "
        "Gateway Time-out</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        TO,
        None,
        "the gateway gave up waiting for AssemblyAI's backend",
    ),
]
http_cases(FAM, _get, GET)

SUBMIT: list[Row] = [
    (
        "bad_audio_url",
        400,
        _err(
            "Transcoding failed. File does not appear to contain audio. File type is "
            "text/html (HTML document, ASCII text, with very long lines)."
        ),
        {},
        INT,
        None,
        "the audio URL is not audio (the pack's input)",
    ),
    (
        "no_balance",
        400,
        _err("Your current account balance is negative. Please top up to continue using the API."),
        {},
        QUOTA,
        None,
        "the account's prepaid balance is spent",
    ),
    (
        "bad_field",
        400,
        _err("Invalid endpoint schema, the following fields are not allowed: ['punctuation_mode']"),
        {},
        INT,
        None,
        "the request names a field the API does not know (the pack's input)",
    ),
]
http_cases(FAM, _submit, SUBMIT, transport=False)


def _missing_file(ctx: Http) -> Any:
    return _submit(ctx.http.url, audio="/nonexistent/corpus44/meeting-2024-05-02.wav")


FAM.add(
    "missing_file",
    NF | INT,
    "the audio path the caller gave names no file: the SDK fails to open it",
    _missing_file,
)
FAM.add(
    "bad_audio_type",
    INT,
    "an audio source of an unsupported type: the SDK refuses it",
    lambda c: _submit(c.http.url, audio=12345),
)


def _still_queued(ctx: Http) -> Any:
    ctx.http.set(200, {"id": _TRANSCRIPT, "status": "queued", "audio_url": _AUDIO})
    return _get(ctx.http.url)


FAM.add(
    "still_queued",
    TO,
    "the transcript is still queued when the pack's 1 s polling deadline passes",
    _still_queued,
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: _get(f"http://127.0.0.1:{c.net.garbage}"),
)
