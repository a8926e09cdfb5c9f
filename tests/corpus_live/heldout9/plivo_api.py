"""plivo (Plivo's SMS and voice SDK, over requests) against a fake Plivo REST API on
127.0.0.1. The SDK builds every message URL from its module constant
``PLIVO_API_BASE_URI``; the pack points it at the fake (set around each call) and gives the
client a 1 s timeout. Errors are Plivo's ``{"api_id", "error"}`` bodies. The SDK raises
``ValidationError`` (400 and its own argument checks), ``AuthenticationError`` (401),
``ForbiddenError``/``GeoPermissionError`` (403), ``ResourceNotFoundError`` (404),
``InvalidRequestError`` (405/409/422), ``PlivoServerError`` (500), a bare ``PlivoRestError``
with only the status for anything else (402, 429, 503: the body and headers are dropped),
and requests' exceptions from the transport."""

from __future__ import annotations

from collections.abc import Callable
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

FAM = family("plivo", "fake Plivo REST API", http_setup, half="heldout9")

_AUTH_ID = "MAPLANTED0NZJMYTYXMD"
_AUTH_TOKEN = "PLANTEDplivoTok3nZmQ0NjA1YTk2YzBlNmFhNTE0ZTlm"
_API_ID = "b2f9c6a4-0cda-11f1-9d2b-0242ac110003"
_MSG = "db3ce55a-7f1d-11f1-8ea7-1e6d5e1a0c42"


def _call(url: str, op: Callable[[Any], Any], auth_id: str = _AUTH_ID) -> Any:
    import plivo  # type: ignore[import-untyped]
    from plivo.rest import client as rest  # type: ignore[import-untyped]

    saved = rest.PLIVO_API_BASE_URI
    rest.PLIVO_API_BASE_URI = f"{url}/v1/Account"
    try:
        return op(plivo.RestClient(auth_id, _AUTH_TOKEN, timeout=1))
    finally:
        rest.PLIVO_API_BASE_URI = saved


def _get(url: str) -> Any:
    return _call(url, lambda c: c.messages.get(_MSG))


def _send(url: str) -> Any:
    return _call(
        url, lambda c: c.messages.create(src="14155550100", dst="447700900123", text="Code 4417")
    )


def _err(error: str) -> dict[str, str]:
    return {"api_id": _API_ID, "error": error}


GET: list[Row] = [
    (
        "auth_failed",
        401,
        _err("authentication failed"),
        {},
        AUTH,
        None,
        "the Auth ID and Auth Token do not match",
    ),
    (
        "no_message",
        404,
        _err("not found"),
        {},
        NF,
        None,
        "no message with that UUID on the account",
    ),
    (
        "throttled",
        429,
        _err("too many requests"),
        {},
        RL,
        None,
        "the account's API request rate is exceeded",
    ),
    (
        "server_error",
        500,
        _err("Internal server error"),
        {},
        NET,
        None,
        "Plivo failed",
    ),
    (
        "unavailable",
        503,
        "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle "
        "this request.\n</body></html>\n",
        {},
        NET,
        None,
        "Plivo's load balancer has no backend",
    ),
]
http_cases(FAM, _get, GET)

SEND: list[Row] = [
    (
        "bad_destination",
        400,
        _err("invalid 'dst' parameter"),
        {},
        INT,
        None,
        "the destination number is malformed (the pack's input)",
    ),
    (
        "src_not_owned",
        400,
        _err("14155550100 is not a valid phone number or does not belong to your account"),
        {},
        INT,
        None,
        "the sender number is not one of the account's numbers",
    ),
    (
        "no_credit",
        402,
        _err("Insufficient credit"),
        {},
        QUOTA,
        None,
        "the account's balance is too low to send",
    ),
    (
        "geo_blocked",
        403,
        _err("Destination country GB is not enabled for SMS. Please enable it in Geo Permissions."),
        {},
        AUTH,
        None,
        "the account may not send to that country",
    ),
]
http_cases(FAM, _send, SEND, transport=False)


def _same_number(ctx: Http) -> Any:
    return _call(
        ctx.http.url,
        lambda c: c.messages.create(src="14155550100", dst="14155550100", text="hi"),
    )


FAM.add(
    "same_number",
    INT,
    "destination equals source: the SDK refuses before sending",
    _same_number,
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: _get(f"http://127.0.0.1:{c.net.garbage}"),
)
FAM.add(
    "malformed_auth_id",
    AUTH | INT,
    "the configured Auth ID is not of Plivo's form: the SDK refuses before sending",
    lambda c: _call(c.http.url, lambda cl: cl.messages.get(_MSG), auth_id="ops@example.com"),
)
