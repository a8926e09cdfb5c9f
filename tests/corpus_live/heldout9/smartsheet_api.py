"""smartsheet-python-sdk (Smartsheet's API 2.0 SDK, over requests) against a fake
Smartsheet API on 127.0.0.1 (``api_base``). The pack turns the SDK's exceptions on
(``errors_as_exceptions``: by default it returns an ``Error`` object), gives it no retry
budget (``max_retry_time=0``) and, since the SDK sends without any timeout, binds a 1 s
timeout to its session. Errors are Smartsheet's ``{"errorCode", "message", "refId"}``
bodies. The SDK raises ``ApiError`` for most codes, ``RateLimitExceededError``,
``SystemMaintenanceError`` and the other retryable ones by name, ``UnexpectedRequestError``
wrapping requests' exceptions from the transport, and ``ValueError`` when no token is
configured."""

from __future__ import annotations

import functools
import os
from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    RL,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("smartsheet-python-sdk", "fake Smartsheet API 2.0", http_setup, half="heldout9")

_TOKEN = "PLANTEDsmartsheetTok3n7xQ2mR9vK4pL8nW3"
_SHEET = 4583173393803140


def _client(url: str, token: str | None = _TOKEN) -> Any:
    import smartsheet  # type: ignore[import-untyped]

    client = smartsheet.Smartsheet(access_token=token, max_retry_time=0, api_base=f"{url}/2.0")
    client.errors_as_exceptions(True)
    session = client._session
    session.send = functools.partial(session.send, timeout=1)
    return client


def _get(url: str) -> Any:
    return _client(url).Sheets.get_sheet(_SHEET)


def _create(url: str) -> Any:
    import smartsheet

    client = _client(url)
    sheet = smartsheet.models.Sheet(
        {
            "name": "Q3 launch",
            "columns": [{"title": "Task", "primary": True, "type": "TEXT_NUMBER"}],
        }
    )
    return client.Home.create_sheet(sheet)


def _err(code: int, message: str) -> dict[str, Any]:
    return {"errorCode": code, "message": message, "refId": "1xqawd3s94f4y"}


GET: list[Row] = [
    (
        "token_invalid",
        401,
        _err(1002, "Your Access Token is invalid."),
        {},
        AUTH,
        None,
        "the access token is unknown",
    ),
    (
        "token_expired",
        401,
        _err(1003, "Your Access Token has expired."),
        {},
        AUTH,
        None,
        "the OAuth access token expired",
    ),
    (
        "not_authorized",
        403,
        _err(1004, "You are not authorized to perform this action."),
        {},
        AUTH,
        None,
        "the sheet is not shared with this user",
    ),
    (
        "no_sheet",
        404,
        _err(1006, "Not Found"),
        {},
        NF,
        None,
        "no sheet with that id",
    ),
    (
        "throttled",
        429,
        _err(4003, "Rate limit exceeded."),
        {},
        RL,
        None,
        "the token's 300 requests a minute are spent",
    ),
    (
        "unexpected",
        500,
        _err(
            4000,
            "An unexpected error has occurred. Please contact the Support team at "
            "https://help.smartsheet.com/contact for assistance.",
        ),
        {},
        NET,
        None,
        "Smartsheet failed",
    ),
    (
        "maintenance",
        503,
        _err(
            4001,
            "Smartsheet.com is currently offline for system maintenance. Please check back "
            "again shortly.",
        ),
        {},
        NET,
        None,
        "Smartsheet is offline for maintenance",
    ),
]
http_cases(FAM, _get, GET)

CREATE: list[Row] = [
    (
        "unparsable",
        400,
        _err(
            1008,
            'Unable to parse request. The following error occurred: Field "primary" was of '
            "unexpected type.",
        ),
        {},
        INT,
        None,
        "the sheet body does not parse (the pack's input)",
    ),
    (
        "missing_title",
        400,
        _err(1012, "Required object attribute(s) are missing from your request: column.title."),
        {},
        INT,
        None,
        "a column has no title (the pack's input)",
    ),
]
http_cases(FAM, _create, CREATE, transport=False)


def _no_token(ctx: Http) -> Any:
    saved = os.environ.pop("SMARTSHEET_ACCESS_TOKEN", None)
    try:
        return _client(ctx.http.url, token=None).Sheets.get_sheet(_SHEET)
    finally:
        if saved is not None:
            os.environ["SMARTSHEET_ACCESS_TOKEN"] = saved


FAM.add(
    "no_token",
    AUTH | INT,
    "no access token configured: the SDK refuses before sending",
    _no_token,
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: _get(f"http://127.0.0.1:{c.net.garbage}"),
)
