"""py-trello (a Python wrapper of Trello's REST API over requests) against a fake Trello API on
127.0.0.1. The library hard-codes ``https://api.trello.com/1``: its ``http_service`` hook (any
object with requests' ``request``) is given a shim that sends the same request to the fake with
a 1 s timeout. Trello answers most errors in plain text (``invalid key``, ``invalid token``,
``unauthorized permission requested``, ``invalid id``...), rate limits as a small JSON body;
py-trello raises ``Unauthorized`` for 401 and ``ResourceUnavailable`` for any other non-200, and
decodes a 200 body as JSON. Faked: the Trello API; real: py-trello and requests."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("py-trello", "fake Trello REST API", http_setup, half="heldout11")

_BOARD = "5f8c2d7e9a1b3c4d5e6f7a8b"


class _Shim:
    """requests' ``request`` with the Trello host swapped for the fake, and a timeout."""

    def __init__(self, base: str) -> None:
        self.base = base

    def request(self, method: str, url: str, **kw: Any) -> Any:
        import requests

        url = url.replace("https://api.trello.com", self.base)
        return requests.request(method, url, timeout=1, **kw)


def _client(url: str) -> Any:
    from trello import TrelloClient  # type: ignore[import-untyped]

    return TrelloClient(
        api_key="PLANTEDtrello5c1e9a7b3d2f4e6a8c0b",
        token="PLANTEDtrellotoken0a1b2c3d4e5f60718293a4b5c6d7e8f9",
        http_service=_Shim(url),
    )


def _get(url: str) -> Any:
    return _client(url).get_board(_BOARD)


def _add(url: str) -> Any:
    return _client(url).add_board("Q4 launch", default_lists=False)


TEXT = "text/plain; charset=utf-8"

GET_TEXT: list[Row] = [
    ("invalid_key", 401, "invalid key", {}, AUTH, None, "the API key is unknown"),
    ("invalid_token", 401, "invalid token", {}, AUTH, None, "the token is revoked or wrong"),
    (
        "board_not_found",
        404,
        "The requested resource was not found.",
        {},
        NF,
        None,
        "the board does not exist or is not visible to the token",
    ),
    ("invalid_id", 400, "invalid id", {}, INT | NF, None, "the caller's board id is malformed"),
    ("server_error", 500, "Internal Server Error", {}, NET, None, "Trello failed"),
]
http_cases(FAM, _get, GET_TEXT, content_type=TEXT, transport=False)

GET_JSON: list[Row] = [
    (
        "token_rate_limit",
        429,
        {"error": "API_TOKEN_LIMIT_EXCEEDED", "message": "Rate limit exceeded"},
        {},
        RL,
        None,
        "the token's 100 requests per 10 seconds are used up",
    ),
]
http_cases(FAM, _get, GET_JSON, transport=False)

GET_HTML: list[Row] = [
    (
        "unavailable_html",
        503,
        "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this"
        " request.\n</body></html>\n",
        {},
        NET,
        None,
        "the load balancer has no backend",
    ),
    (
        "portal_page",
        200,
        "<!DOCTYPE html><html><head><title>Sign in to the network</title></head><body>"
        "Please accept the terms to continue.</body></html>",
        {},
        NET | INT,
        None,
        "a captive portal answered 200 with HTML instead of the API's JSON",
    ),
]
http_cases(FAM, _get, GET_HTML, content_type="text/html", transport=False)

ADD: list[Row] = [
    (
        "no_write_scope",
        401,
        "unauthorized permission requested",
        {},
        AUTH,
        None,
        "the token was granted read scope only",
    ),
    (
        "bad_name",
        400,
        "invalid value for name",
        {},
        INT,
        None,
        "the caller's board name is refused",
    ),
]
http_cases(FAM, _add, ADD, content_type=TEXT)
