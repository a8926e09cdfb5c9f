"""deepl (DeepL's Python library, requests underneath) against a fake DeepL API answering its
documented error bodies (``{"message"}``, some with ``detail``) and statuses: 403 bad or
wrong-plan key, 456 the character quota used up, 404 unknown glossary, 400 bad parameters,
413 a too large request, 429 with ``Retry-After``, 500, 503 and 529 under high load; plus the
library's own timeout and the transport failures. The library's retries are set to none."""

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

FAM = family("deepl", "fake DeepL API", http_setup, half="heldout15")


def _client(url: str) -> Any:
    import deepl
    import deepl.http_client

    deepl.http_client.max_network_retries = 0
    deepl.http_client.min_connection_timeout = 1.0
    return deepl.DeepLClient("8f2d1c3e-PLANTED-deepl-key:fx", server_url=url)


def _translate(url: str) -> Any:
    return _client(url).translate_text("Where is the station?", target_lang="DE")


ROWS: list[Row] = [
    (
        "bad_key",
        403,
        {"message": "Authorization failure, check auth_key"},
        {},
        AUTH,
        None,
        "the authentication key is not valid",
    ),
    (
        "wrong_endpoint",
        403,
        {"message": "Wrong endpoint. Use https://api.deepl.com"},
        {},
        AUTH | INT,
        None,
        "a Pro key sent to the Free API's endpoint",
    ),
    (
        "quota_exceeded",
        456,
        {"message": "Quota Exceeded"},
        {},
        QUOTA,
        None,
        "the billing period's character quota is used up",
    ),
    (
        "bad_target_lang",
        400,
        {"message": "Value for 'target_lang' not supported."},
        {},
        INT,
        None,
        "the target language is not supported (the caller's input)",
    ),
    (
        "too_large",
        413,
        {"message": "Request Entity Too Large"},
        {},
        INT,
        None,
        "the text is over the request size limit (the caller's input)",
    ),
    (
        "rate_limited",
        429,
        {"message": "Too many requests, DeepL servers are currently experiencing high load"},
        {"Retry-After": "2"},
        RL,
        2.0,
        "too many requests, with the server's delay",
    ),
    (
        "high_load",
        529,
        {"message": "Too many requests"},
        {},
        RL | NET,
        None,
        "DeepL's own status for too many requests under high load",
    ),
    (
        "internal",
        500,
        {"message": "Internal server error"},
        {},
        NET,
        None,
        "DeepL failed",
    ),
    (
        "unavailable",
        503,
        {"message": "Service unavailable"},
        {},
        NET,
        None,
        "DeepL is temporarily unavailable",
    ),
]
http_cases(FAM, _translate, ROWS)


def _missing_glossary(ctx: Http) -> Any:
    ctx.http.set(404, {"message": "Not found", "detail": "Glossary not found"})
    return _client(ctx.http.url).get_glossary("def3a26b-3e84-45b3-84ae-0c0aaf3525f7")


FAM.add("glossary_not_found", NF, "HTTP 404: the glossary does not exist", _missing_glossary)
