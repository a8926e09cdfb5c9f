"""pagerduty (PagerDuty's official Python client, the successor of pdpyras, over httpx)
against a fake PagerDuty REST API v2 and Events API v2 on 127.0.0.1. The client insists on https base URLs, so the pack hands it an httpx transport that
routes its requests for PagerDuty's hosts to the fake's address. The
pack bounds the client's own patience: 1 s timeout, no network retries, one retry of a 429
after a short sleep (by default the client retries a 429 forever). REST errors are
PagerDuty's ``{"error": {"message", "code", "errors"}}`` bodies (its documented numeric error
codes); the Events API answers ``{"status", "message", "errors"}``. The client raises
``HttpError`` (a 401 or any non-success status, the response attached), ``ServerHttpError``
and, once its network attempts are spent, ``Error`` chained to httpx's exception."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("pagerduty", "fake PagerDuty REST and Events API v2", http_setup, half="heldout8")

_KEY = "u+PLANTEDpdKey0a1b2c3d"
_ROUTING = "R0PLANTED1b2c3d4e5f60718293a4b5c"


def _patient(client: Any) -> Any:
    client.timeout = 1.0
    client.max_network_attempts = 0
    client.sleep_timer = 0.01
    client.retry[429] = 1
    return client


def _routed(base: str) -> Any:
    import httpx2

    class Route(httpx2.BaseTransport):
        """Sends what the client addresses to PagerDuty's https hosts to ``base`` instead."""

        def __init__(self) -> None:
            self.inner = httpx2.HTTPTransport()

        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            request.url = httpx2.URL(base + request.url.raw_path.decode())
            return self.inner.handle_request(request)

        def close(self) -> None:
            self.inner.close()

    return Route()


def _rest(url: str) -> Any:
    from pagerduty import RestApiV2Client

    client = RestApiV2Client(_KEY, default_from="oncall@example.com", transport=_routed(url))
    return _patient(client)


def _get_incident(url: str) -> Any:
    return _rest(url).rget("/incidents/Q2KD9GHV3WJ8PB")


def _create_user(url: str) -> Any:
    body = {"user": {"type": "user", "name": "Ana Ruiz", "email": "ana.ruiz@example.com"}}
    return _rest(url).rpost("/users", json=body)


def _trigger(url: str) -> Any:
    from pagerduty import EventsApiV2Client

    client = _patient(EventsApiV2Client(_ROUTING, transport=_routed(url)))
    return client.trigger("Disk 95% full on db-3", "db-3.prod")


def _err(message: str, code: int, *errors: str) -> dict[str, Any]:
    err: dict[str, Any] = {"message": message, "code": code}
    if errors:
        err["errors"] = list(errors)
    return {"error": err}


GET: list[Row] = [
    (
        "bad_key",
        401,
        _err("Authentication failed", 2006),
        {},
        AUTH,
        None,
        "the API key is unknown or deactivated",
    ),
    (
        "no_incident",
        404,
        _err("Not Found", 2100),
        {},
        NF,
        None,
        "no incident with that id",
    ),
    (
        "account_expired",
        402,
        _err("Your account is expired and cannot use the API", 2012),
        {},
        QUOTA | AUTH,
        None,
        "the account's subscription lapsed",
    ),
    (
        "rate_limited",
        429,
        _err("Rate Limit Exceeded", 2020),
        {"ratelimit-limit": "960", "ratelimit-remaining": "0", "ratelimit-reset": "7"},
        RL,
        7.0,
        "the key's per-minute budget is spent (still so after the client's one retry)",
    ),
    (
        "internal",
        500,
        _err("Internal Error", 2000),
        {},
        NET,
        None,
        "PagerDuty failed",
    ),
]
http_cases(FAM, _get_incident, GET)

POST: list[Row] = [
    (
        "read_only_key",
        403,
        _err("Access Denied", 2010, "Access Denied"),
        {},
        AUTH,
        None,
        "a read-only key may not create users",
    ),
    (
        "email_taken",
        400,
        _err("Invalid Input Provided", 2001, "Email has already been taken"),
        {},
        EXISTS | INT,
        None,
        "a user with that email exists",
    ),
    (
        "bad_time_zone",
        400,
        _err("Invalid Input Provided", 2001, "Time zone is not included in the list"),
        {},
        INT,
        None,
        "the user's time zone is not one PagerDuty knows (the pack's input)",
    ),
]
http_cases(FAM, _create_user, POST, transport=False)

EVENTS: list[Row] = [
    (
        "event_invalid",
        400,
        {
            "status": "invalid event",
            "message": "Event object is invalid",
            "errors": ["'routing_key' is invalid"],
        },
        {},
        AUTH | INT,
        None,
        "the Events API does not know the routing key",
    ),
]
http_cases(FAM, _trigger, EVENTS, transport=False)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: _get_incident(f"http://127.0.0.1:{c.net.garbage}"),
)
