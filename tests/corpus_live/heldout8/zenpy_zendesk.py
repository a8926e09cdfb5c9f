"""zenpy (the Zendesk Support API wrapper, over requests) against a fake Zendesk API on
127.0.0.1. Zenpy builds ``https://{subdomain}.zendesk.com`` URLs; the pack points it at the
fake with zenpy's own overrides (``ZENPY_FORCE_SCHEME``, ``ZENPY_FORCE_NETLOC``, set around
each call), a 1 s timeout and a rate-limit budget of 1 s (by default zenpy sleeps out every
``Retry-After`` and tries again). Errors are Zendesk's ``{"error", "description",
"details"?}`` bodies (``Couldn't authenticate you``, ``RecordNotFound``, ``RecordInvalid``
with per-field ``details``, ``TooManyValues``). Zenpy raises ``RecordNotFoundException``,
``TooManyValuesException`` or ``APIException`` (the JSON body as the message, the response
attached), ``RatelimitBudgetExceeded`` once the budget is spent (the wait is not on it),
``ZenpyException`` for its own configuration checks, and requests' exceptions from the
transport."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    RL,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
    transport_cases,
)

FAM = family("zenpy", "fake Zendesk Support API", http_setup, half="heldout8")

_CREDS = {"email": "ops@example.com", "token": "PLANTEDzdTok3n0a1b2c3d4e5f6g7h8i9j0kLmN"}


def _call(netloc: str, op: Callable[[Any], Any], subdomain: str | None = "acme") -> Any:
    from zenpy import Zenpy

    saved = {k: os.environ.get(k) for k in ("ZENPY_FORCE_SCHEME", "ZENPY_FORCE_NETLOC")}
    os.environ["ZENPY_FORCE_SCHEME"] = "http"
    os.environ["ZENPY_FORCE_NETLOC"] = netloc
    try:
        client = Zenpy(subdomain=subdomain, timeout=1, ratelimit_budget=1, **_CREDS)
        return op(client)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _netloc(url: str) -> str:
    return url.removeprefix("http://")


def _get_ticket(url: str) -> Any:
    return _call(_netloc(url), lambda z: z.tickets(id=35436))


def _create_user(url: str) -> Any:
    from zenpy.lib.api_objects import User

    return _call(
        _netloc(url), lambda z: z.users.create(User(name="Ana Ruiz", email="ana@example.com"))
    )


def _create_ticket(url: str) -> Any:
    from zenpy.lib.api_objects import Ticket, User

    ticket = Ticket(
        subject="Printer on fire",
        description="Third floor printer is smoking",
        requester=User(name="Bob", email="bob at example"),
    )
    return _call(_netloc(url), lambda z: z.tickets.create(ticket))


def _invalid(field: str, description: str, error: str) -> dict[str, Any]:
    return {
        "error": "RecordInvalid",
        "description": "Record validation errors",
        "details": {field: [{"description": description, "error": error}]},
    }


GET: list[Row] = [
    (
        "cannot_authenticate",
        401,
        {"error": "Couldn't authenticate you"},
        {},
        AUTH,
        None,
        "the email and API token do not match",
    ),
    (
        "forbidden",
        403,
        {
            "error": "Forbidden",
            "description": "You do not have access to this page. Please contact the account "
            "owner of this help desk for further help.",
        },
        {},
        AUTH,
        None,
        "a light agent may not read that ticket",
    ),
    (
        "no_ticket",
        404,
        {"error": "RecordNotFound", "description": "Not found"},
        {},
        NF,
        None,
        "no ticket with that id",
    ),
    (
        "internal",
        500,
        {"error": "InternalError", "description": "Something went wrong on our end"},
        {},
        NET,
        None,
        "Zendesk failed",
    ),
    (
        "budget_spent",
        429,
        {"error": "TooManyRequests", "description": "Rate limit exceeded"},
        {"Retry-After": "37"},
        RL,
        None,
        "the account's per-minute limit; the wait exceeds the pack's budget",
    ),
]
http_cases(FAM, _get_ticket, GET, transport=False)
transport_cases(
    FAM, lambda host, port: _call(f"{host}:{port}", lambda z: z.tickets(id=35436)), dns_port=80
)

CREATE: list[Row] = [
    (
        "email_taken",
        422,
        _invalid(
            "email",
            "Email: ana@example.com is already being used by another user",
            "DuplicateValue",
        ),
        {},
        EXISTS,
        None,
        "a user with that email exists",
    ),
]
http_cases(FAM, _create_user, CREATE, transport=False)

TICKET: list[Row] = [
    (
        "requester_invalid",
        422,
        _invalid("requester", "Requester: Email is not properly formatted", "InvalidValue"),
        {},
        INT,
        None,
        "the requester's email is malformed (the pack's input)",
    ),
]
http_cases(FAM, _create_ticket, TICKET, transport=False)


def _too_many_ids(ctx: Http) -> Any:
    ctx.http.set(
        400,
        {"error": "TooManyValues", "description": "Too many values specified for ids (max 100)"},
    )
    return _call(_netloc(ctx.http.url), lambda z: list(z.tickets(ids=list(range(1, 151)))))


FAM.add(
    "too_many_ids",
    INT,
    "HTTP 400: more ticket ids than one request takes (the pack's input)",
    _too_many_ids,
)
FAM.add(
    "no_subdomain",
    INT,
    "no Zendesk subdomain configured: zenpy refuses before sending",
    lambda c: _call(_netloc(c.http.url), lambda z: z.tickets(id=35436), subdomain=None),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: _call(f"127.0.0.1:{c.net.garbage}", lambda z: z.tickets(id=35436)),
)
