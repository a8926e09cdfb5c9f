"""The meilisearch Python client against a fake Meilisearch answering its error objects."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, EXISTS, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family(
    "meilisearch", "fake Meilisearch API (message/code/type/link)", http_setup, half="heldout"
)


def _call(url: str) -> Any:
    import meilisearch

    return meilisearch.Client(url, "key-PLANTED", timeout=1).index("movies").search("x")


def _e(message: str, code: str, type_: str) -> dict[str, Any]:
    return {
        "message": message,
        "code": code,
        "type": type_,
        "link": f"https://docs.meilisearch.com/errors#{code}",
    }


ROWS: list[Row] = [
    (
        "index_not_found",
        404,
        _e("Index `movies` not found.", "index_not_found", "invalid_request"),
        {},
        NF,
        None,
        "no such index",
    ),
    (
        "missing_auth",
        401,
        _e(
            "The Authorization header is missing. It must use the bearer authorization method.",
            "missing_authorization_header",
            "auth",
        ),
        {},
        AUTH,
        None,
        "no key",
    ),
    (
        "invalid_key",
        403,
        _e("The provided API key is invalid.", "invalid_api_key", "auth"),
        {},
        AUTH,
        None,
        "bad key",
    ),
    (
        "index_exists",
        409,
        _e("Index `movies` already exists.", "index_already_exists", "invalid_request"),
        {},
        EXISTS,
        None,
        "index already exists",
    ),
    (
        "bad_filter",
        400,
        _e("Attribute `year` is not filterable.", "invalid_search_filter", "invalid_request"),
        {},
        INT,
        None,
        "bad filter",
    ),
    (
        "too_large",
        413,
        _e("The provided payload reached the size limit.", "payload_too_large", "invalid_request"),
        {},
        INT,
        None,
        "payload too large",
    ),
    (
        "no_space",
        500,
        _e("There was no space left on the device.", "no_space_left_on_device", "system"),
        {},
        INT | NET,
        None,
        "server disk full",
    ),
    (
        "internal",
        500,
        _e("An internal error has occurred.", "internal", "internal"),
        {},
        NET,
        None,
        "internal error",
    ),
    (
        "too_many_search",
        503,
        _e(
            "Too many search requests running at the same time: 1000. Retry after 10s.",
            "too_many_search_requests",
            "system",
        ),
        {"Retry-After": "10"},
        RL,
        10.0,
        "search queue full, retry after 10s",
    ),
    (
        "document_not_found",
        404,
        _e("Document `1` not found.", "document_not_found", "invalid_request"),
        {},
        NF,
        None,
        "no such document",
    ),
]
http_cases(FAM, _call, ROWS)
