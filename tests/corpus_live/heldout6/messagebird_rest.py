"""messagebird (MessageBird's legacy REST SDK, over requests) against a fake MessageBird REST
API on 127.0.0.1 (``Client(key, http_client=HttpClient(url, ...))``): errors are MessageBird's
documented bodies ``{"errors": [{"code", "description", "parameter"}]}`` (2 request not
allowed, 9 missing params, 10 invalid params, 20 not found, 25 not enough balance) on the
statuses its docs list (401, 404, 422). The SDK's ``HttpClient`` accepts only those statuses
(and 200/201/204/405) and calls ``raise_for_status`` on every other one, so a 429 or a 5xx
surfaces as requests' bare ``HTTPError`` whatever the body says; the documented ones become
``messagebird.client.ErrorException`` whose message joins the error descriptions. Its requests
carry no timeout at all, so a server that never answers would hang the call: no such case
here; the transport cases are a refused port, an unresolvable host, a peer that closes at once
and one that answers garbage."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    UNRESOLVABLE,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("messagebird", "fake MessageBird REST API", http_setup, half="heldout6")

_KEY = "PLANTEDtestgshuPaZHlhaY0KVeHmH"


def _client(url: str) -> Any:
    import messagebird
    from messagebird.http_client import HttpClient

    return messagebird.Client(_KEY, http_client=HttpClient(url + "/", _KEY, "MessageBird/Pack"))


def _message(url: str) -> Any:
    return _client(url).message("b2ee0a1f5f6e4a53b8b7a6e0c1d2e3f4")


def _send(url: str) -> Any:
    return _client(url).message_create("Acme", ["31612345678"], "Your code is 493021")


def _errors(code: int, description: str, parameter: str | None = None) -> dict[str, Any]:
    return {"errors": [{"code": code, "description": description, "parameter": parameter}]}


GET: list[Row] = [
    (
        "bad_key",
        401,
        _errors(2, "Request not allowed (incorrect access_key)", "access_key"),
        {},
        AUTH,
        None,
        "the access key is wrong",
    ),
    (
        "no_message",
        404,
        _errors(20, "message not found"),
        {},
        NF,
        None,
        "no message with that id",
    ),
    (
        "server_error",
        500,
        _errors(99, "Internal error"),
        {},
        NET,
        None,
        "MessageBird failed (the SDK raises a bare HTTPError)",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad "
        "Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the load balancer found no backend",
    ),
]
http_cases(FAM, _message, GET, transport=False)

SEND: list[Row] = [
    (
        "no_balance",
        422,
        _errors(25, "Not enough balance", None),
        {},
        QUOTA,
        None,
        "the account has no credit left to send SMS",
    ),
    (
        "no_recipients",
        422,
        _errors(9, "no (correct) recipients found", "recipients"),
        {},
        INT,
        None,
        "the recipients are missing or all invalid (the pack's input)",
    ),
    (
        "bad_originator",
        422,
        _errors(
            10,
            "originator is invalid: alphanumeric originators are limited to 11 characters",
            "originator",
        ),
        {},
        INT,
        None,
        "the sender id is invalid (the pack's input)",
    ),
    (
        "rate_limited",
        429,
        "Too Many Requests\n",
        {"Content-Type": "text/plain"},
        RL,
        None,
        "too many requests, no delay given (the SDK raises a bare HTTPError)",
    ),
    (
        "unavailable",
        503,
        _errors(99, "Internal error"),
        {},
        NET,
        None,
        "MessageBird is unavailable",
    ),
]
http_cases(FAM, _send, SEND, transport=False)

FAM.add("refused", NET, "nothing listens", lambda c: _send(f"http://{LOOPBACK}:{c.net.closed}"))
FAM.add("dns", NET, "host does not resolve", lambda c: _send(f"http://{UNRESOLVABLE}:80"))
FAM.add(
    "dropped", NET, "closed at once", lambda c: _message(f"http://{LOOPBACK}:{c.net.close_now}")
)


def _garbage(ctx: Http) -> Any:
    return _message(f"http://{LOOPBACK}:{ctx.net.garbage}")


FAM.add("garbage", NET, "the peer answers bytes that are not HTTP", _garbage)
