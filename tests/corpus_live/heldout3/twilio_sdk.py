"""twilio (Twilio's Python helper library) against a fake Twilio REST API answering its
documented error bodies (``{"code": 20003, "message": ..., "more_info": ..., "status": 401}``):
Twilio's own five-digit error codes next to the HTTP status."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("twilio", "fake Twilio REST API (error codes)", http_setup, half="heldout3")

SID = "AC00000000000000000000000000000000"


def _client(url: str) -> Any:
    from twilio.http.http_client import TwilioHttpClient
    from twilio.rest import Client

    client = Client(SID, "PLANTED-twilio-token", http_client=TwilioHttpClient(timeout=1))
    client.api.base_url = url
    return client


def _send(url: str) -> Any:
    return _client(url).messages.create(to="+15558675310", from_="+15017122661", body="hi")


def _fetch(url: str) -> Any:
    return _client(url).messages("SM00000000000000000000000000000000").fetch()


def _e(status: int, code: int, message: str) -> dict[str, Any]:
    return {
        "code": code,
        "message": message,
        "more_info": f"https://www.twilio.com/docs/errors/{code}",
        "status": status,
    }


SEND: list[Row] = [
    (
        "bad_token",
        401,
        _e(401, 20003, "Authenticate"),
        {"WWW-Authenticate": 'Basic realm="Twilio API"'},
        AUTH,
        None,
        "20003: the account SID / auth token pair is wrong",
    ),
    (
        "test_credentials",
        403,
        _e(403, 20008, "Resource not accessible with Test Account Credentials"),
        {},
        AUTH,
        None,
        "20008: test credentials may not use this resource",
    ),
    (
        "invalid_to",
        400,
        _e(400, 21211, "Invalid 'To' Phone Number: +1555867XXXX"),
        {},
        INT,
        None,
        "21211: the pack's input is not a phone number, no retry helps",
    ),
    (
        "unsubscribed",
        400,
        _e(400, 21610, "Attempt to send to unsubscribed recipient"),
        {},
        INT,
        None,
        "21610: the recipient replied STOP; a business outcome",
    ),
    (
        "too_many_requests",
        429,
        _e(429, 20429, "Too Many Requests"),
        {},
        RL,
        None,
        "20429: the account's concurrency limit",
    ),
    (
        "queue_overflow",
        429,
        _e(429, 30001, "Queue overflow"),
        {},
        RL,
        None,
        "30001: too many messages queued for the sender, try later",
    ),
    (
        "internal",
        500,
        _e(500, 20500, "Internal Server Error"),
        {},
        NET,
        None,
        "20500: Twilio failed",
    ),
    (
        "unavailable",
        503,
        _e(503, 20503, "Service Unavailable"),
        {},
        NET,
        None,
        "20503: Twilio is unavailable",
    ),
]
http_cases(FAM, _send, SEND)
http_cases(
    FAM,
    _fetch,
    [
        (
            "message_not_found",
            404,
            _e(
                404,
                20404,
                f"The requested resource /2010-04-01/Accounts/{SID}/Messages/"
                "SM00000000000000000000000000000000.json was not found",
            ),
            {},
            NF,
            None,
            "20404: the message SID does not exist",
        )
    ],
    transport=False,
)
