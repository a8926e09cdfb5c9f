"""runwayml (Runway's generative video and image API, a Stainless-generated SDK over httpx)
through its sync client ``RunwayML`` against a fake Runway API on 127.0.0.1 (``base_url``,
retries off, a 1 s timeout). Errors are Runway's ``{"error"}`` bodies, with zod's
``issues`` list on a rejected body. The SDK raises one ``APIStatusError`` subclass per
status (``AuthenticationError``, ``NotFoundError``, ``RateLimitError``,
``InternalServerError``...), ``APIConnectionError`` and ``APITimeoutError`` from the
transport, and ``ValueError`` for its own argument checks."""

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
)

FAM = family("runwayml", "fake Runway API", http_setup, half="heldout9")

_KEY = "key_PLANTED7c1e0a9f5b2d4e6a8c0b1d3f5e7a9c1b2d4f6e8a0c2b4d6f8e0a2c4b6d8f0e2a4c6b8d0f2a4"
_TASK = "17f20503-6c24-4c16-946b-35dbbce2af2f"


def _client(url: str) -> Any:
    from runwayml import RunwayML

    return RunwayML(api_key=_KEY, base_url=url, max_retries=0, timeout=1.0)


def _task(url: str, id: str = _TASK) -> Any:
    with _client(url) as client:
        return client.tasks.retrieve(id)


def _generate(url: str) -> Any:
    with _client(url) as client:
        return client.text_to_image.create(
            model="gen4_image",
            prompt_text="A lighthouse at dawn, 35mm film",
            ratio="1360:768",
        )


GET: list[Row] = [
    (
        "bad_key",
        401,
        {"error": "Incorrect API key provided"},
        {},
        AUTH,
        None,
        "the API key is unknown or was disabled",
    ),
    (
        "no_task",
        404,
        {"error": "Task not found"},
        {},
        NF,
        None,
        "no task with that id (deleted, or another organization's)",
    ),
    (
        "server_error",
        500,
        {"error": "An unexpected error occurred"},
        {},
        NET,
        None,
        "Runway failed",
    ),
]
http_cases(FAM, _task, GET)

GENERATE: list[Row] = [
    (
        "no_credits",
        400,
        {"error": "You do not have enough credits to run this task."},
        {},
        QUOTA,
        None,
        "the organization's credit balance is too low",
    ),
    (
        "daily_limit",
        429,
        {"error": "You have exceeded the daily task limit for your tier."},
        {},
        QUOTA | RL,
        None,
        "the tier's generations per day are used up",
    ),
    (
        "throttled",
        429,
        {"error": "Too many requests. Please try again later."},
        {"Retry-After": "2"},
        RL,
        2.0,
        "too many requests in a short time",
    ),
    (
        "bad_body",
        400,
        {
            "error": "Validation of body failed",
            "issues": [
                {
                    "code": "too_small",
                    "minimum": 1,
                    "type": "array",
                    "inclusive": True,
                    "exact": False,
                    "message": "Array must contain at least 1 element(s)",
                    "path": ["referenceImages"],
                }
            ],
        },
        {},
        INT,
        None,
        "the request body is invalid (the pack's input)",
    ),
    (
        "moderation",
        400,
        {"error": "Your prompt was flagged by our content moderation system."},
        {},
        INT,
        None,
        "the prompt was refused by content moderation",
    ),
    (
        "overloaded",
        503,
        {"error": "Service temporarily unavailable, please try again later."},
        {},
        NET,
        None,
        "Runway's generation service is overloaded",
    ),
]
http_cases(FAM, _generate, GENERATE, transport=False)


def _empty_id(ctx: Http) -> Any:
    return _task(ctx.http.url, id="")


FAM.add("empty_id", INT, "an empty task id: the SDK refuses before sending", _empty_id)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: _task(f"http://127.0.0.1:{c.net.garbage}"),
)
