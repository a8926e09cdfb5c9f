"""ai21 (AI21 Labs' Python SDK, its own httpx client) against a fake AI21 Studio API
answering its FastAPI-style error bodies (``{"detail": ...}``, a list of validation errors on
422) and statuses: 401 bad or missing key, 403, 404 unknown model, 422, 429 (the SDK keeps only
the status and the body text), 500 and 503. The SDK's own refusal of a client with no key,
and the transport failures (its ``timeout_sec`` is a whole second at least)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family("ai21", "fake AI21 Studio API", http_setup, half="heldout5")


def _chat(url: str, key: str | None = "PLANTEDai21studiokey00000000") -> Any:
    from ai21 import AI21Client
    from ai21.ai21_env_config import _AI21EnvConfig
    from ai21.models.chat import ChatMessage

    client = AI21Client(
        api_key=key,
        api_host=url,
        timeout_sec=1,
        env_config=_AI21EnvConfig(_api_key=None, _api_host=url),
    )
    return client.chat.completions.create(
        model="jamba-large",
        messages=[ChatMessage(role="user", content="hello")],
    )


def _detail(msg: str) -> dict[str, Any]:
    return {"detail": msg}


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _detail("Forbidden: Bad or missing Apikey/JWT."),
        {},
        AUTH,
        None,
        "the API key is wrong",
    ),
    (
        "forbidden",
        403,
        _detail("Forbidden"),
        {},
        AUTH,
        None,
        "the key may not use this model or endpoint",
    ),
    ("unknown_model", 404, _detail("Not Found"), {}, NF, None, "no such model or endpoint"),
    (
        "validation",
        422,
        {
            "detail": [
                {
                    "type": "less_than_equal",
                    "loc": ["body", "temperature"],
                    "msg": "Input should be less than or equal to 2",
                    "input": 7,
                    "ctx": {"le": 2.0},
                }
            ]
        },
        {},
        INT,
        None,
        "the request body fails validation (the pack's input)",
    ),
    (
        "bad_request",
        400,
        _detail("max_tokens must be less than or equal to 4096"),
        {},
        INT,
        None,
        "an out-of-range parameter (the pack's input)",
    ),
    (
        "rate_limited",
        429,
        _detail("Too many requests"),
        {},
        RL,
        None,
        "throttled: AI21 sends no delay and the SDK keeps no header",
    ),
    (
        "server_error",
        500,
        _detail("Internal Server Error"),
        {},
        NET,
        None,
        "AI21 failed",
    ),
    (
        "unavailable",
        503,
        _detail("Service Unavailable"),
        {},
        NET,
        None,
        "the model's servers are unavailable",
    ),
    (
        "gateway_timeout",
        504,
        _detail("Gateway Timeout"),
        {},
        TO | NET,
        None,
        "the gateway gave up waiting for the model",
    ),
]
http_cases(FAM, _chat, ROWS)
FAM.add(
    "no_key",
    AUTH | INT,
    "the client was given no API key: the SDK refuses before sending",
    lambda c: _chat(c.http.url, key=None),
)
