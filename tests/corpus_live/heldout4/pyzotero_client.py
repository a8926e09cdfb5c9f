"""pyzotero (the Zotero Web API v3 client) against a fake Zotero API answering its documented
plain-text error bodies: 403 ``Forbidden``/``Invalid key``, 404 ``Not found``, 412 (the library
changed since the version sent), 429 with no ``Backoff`` or
``Retry-After`` (pyzotero's ``TooManyRetriesError``), 500 and 503. Reads wait a fixed
30 s, so the transport cases delete."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("pyzotero", "fake Zotero Web API v3", http_setup, half="heldout4")


def _zot(url: str) -> Any:
    import httpx2
    from pyzotero import zotero

    zot = zotero.Zotero(
        "4752991", "user", "PLANTEDzoterokey0000000", client=httpx2.Client(timeout=1)
    )
    zot.endpoint = url
    return zot


def _item(url: str) -> Any:
    return _zot(url).item("ABCD2345")


def _delete(url: str) -> Any:
    return _zot(url).delete_item({"key": "ABCD2345", "version": 1234, "data": {}})


ITEM: list[Row] = [
    ("forbidden", 403, "Forbidden", {}, AUTH, None, "the key may not read this library"),
    ("invalid_key", 403, "Invalid key", {}, AUTH, None, "the API key does not exist"),
    ("not_found", 404, "Not found", {}, NF, None, "the item key does not exist"),
    (
        "rate_limited",
        429,
        "Too Many Requests",
        {},
        RL,
        None,
        "rate limited with no delay sent (pyzotero gives up)",
    ),
    ("server_error", 500, "An error occurred", {}, NET, None, "Zotero failed"),
    (
        "maintenance",
        503,
        "Service unavailable: the Zotero API is down for maintenance",
        {},
        NET,
        None,
        "Zotero is down for maintenance",
    ),
]
http_cases(FAM, _item, ITEM, content_type="text/plain", transport=False)
http_cases(
    FAM,
    _delete,
    [
        (
            "precondition",
            412,
            "Library has been modified since specified version (expected 1234, found 1240)",
            {"Last-Modified-Version": "1240"},
            INT,
            None,
            "a stale version: the pack must re-read, not a duplicate",
        ),
        (
            "gone",
            404,
            "Item not found",
            {},
            NF,
            None,
            "the item to delete does not exist",
        ),
    ],
    content_type="text/plain",
)
