"""google-genai (the Gemini API SDK) against a fake Gemini API answering Google's error model
(``{"error": {"code", "message", "status": "RESOURCE_EXHAUSTED", "details": [ErrorInfo,
QuotaFailure, RetryInfo{"retryDelay": "17s"}]}}``)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family("google-genai", "fake Gemini API (google.rpc errors)", http_setup, half="heldout2")

SERVICE = "generativelanguage.googleapis.com"


def _call(url: str) -> Any:
    from google import genai
    from google.genai import types

    client = genai.Client(
        api_key="PLANTED-gemini-key",
        http_options=types.HttpOptions(
            base_url=url, timeout=1000, retry_options=types.HttpRetryOptions(attempts=1)
        ),
    )
    return client.models.generate_content(model="gemini-2.0-flash", contents="hi")


def _e(code: int, status: str, message: str, *details: dict[str, Any]) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status, "details": list(details)}}


def _info(reason: str, **metadata: str) -> dict[str, Any]:
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "googleapis.com",
        "metadata": {"service": SERVICE, **metadata},
    }


ROWS: list[Row] = [
    (
        "bad_key",
        400,
        _e(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            _info("API_KEY_INVALID"),
        ),
        {},
        AUTH,
        None,
        "an invalid key answers 400 INVALID_ARGUMENT, reason API_KEY_INVALID",
    ),
    (
        "service_disabled",
        403,
        _e(
            403,
            "PERMISSION_DENIED",
            "Generative Language API has not been used in project 123456789 before or it is "
            "disabled. Enable it by visiting https://console.developers.google.com/apis/api/"
            "generativelanguage.googleapis.com/overview?project=123456789 then retry.",
            _info("SERVICE_DISABLED", consumer="projects/123456789"),
        ),
        {},
        AUTH,
        None,
        "the API is disabled for the key's project: a human must enable it",
    ),
    (
        "no_model",
        404,
        _e(
            404,
            "NOT_FOUND",
            "models/gemini-2.0-flash is not found for API version v1beta, or is not supported "
            "for generateContent. Call ListModels to see the list of available models and their "
            "supported methods.",
        ),
        {},
        NF,
        None,
        "the model does not exist",
    ),
    (
        "per_minute_quota",
        429,
        _e(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota, please check your plan and billing details. For "
            "more information on this error, head to: "
            "https://ai.google.dev/gemini-api/docs/rate-limits.",
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": f"{SERVICE}/generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                        "quotaDimensions": {"location": "global", "model": "gemini-2.0-flash"},
                        "quotaValue": "15",
                    }
                ],
            },
            {
                "@type": "type.googleapis.com/google.rpc.Help",
                "links": [
                    {
                        "description": "Learn more about Gemini API quotas",
                        "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                    }
                ],
            },
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"},
        ),
        {},
        RL,
        17.0,
        "a per-minute quota: the delay is the body's RetryInfo.retryDelay (no header)",
    ),
    (
        "bad_request",
        400,
        _e(
            400,
            "INVALID_ARGUMENT",
            "* GenerateContentRequest.contents: contents is not specified\n",
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [
                    {"field": "contents", "description": "contents is not specified"}
                ],
            },
        ),
        {},
        INT,
        None,
        "the request is malformed: the pack's bug",
    ),
    (
        "too_many_tokens",
        400,
        _e(
            400,
            "INVALID_ARGUMENT",
            "The input token count (1258291) exceeds the maximum number of tokens allowed "
            "(1048576).",
        ),
        {},
        INT,
        None,
        "over the model's context: the same request never passes",
    ),
    (
        "internal",
        500,
        _e(
            500,
            "INTERNAL",
            "An internal error has occurred. Please retry or report in "
            "https://developers.generativeai.google/guide/troubleshooting",
        ),
        {},
        NET,
        None,
        "Google failed (5xx)",
    ),
    (
        "overloaded",
        503,
        _e(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
        {},
        NET | RL,
        None,
        "the model is overloaded, no delay given: retry with backoff",
    ),
    (
        "deadline",
        504,
        _e(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete."),
        {},
        TO,
        None,
        "the server's own deadline passed",
    ),
]
http_cases(FAM, _call, ROWS)
