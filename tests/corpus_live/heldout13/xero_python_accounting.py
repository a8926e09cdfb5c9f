"""xero-python (Xero's OpenAPI Generator client over urllib3, its ``AccountingApi``) against a
fake Xero Accounting API (``/api.xro/2.0``) on 127.0.0.1 (``base_url`` pointed at it, a
valid unexpired OAuth2 token handed in by the token getter so no refresh is attempted,
``_request_timeout=1``, urllib3's retries off so each request is sent once). The fake answers as Xero does: 401/403 as a problem body (``Title``,
``Status``, ``Detail`` such as ``AuthenticationUnsuccessful`` or ``TokenExpired``) with a
``WWW-Authenticate`` header; 404 as a bare text page; 400 as a ``ValidationException`` whose
``Elements[].ValidationErrors[]`` say what is wrong (a duplicate contact name among them); 429
with ``Retry-After`` and ``X-Rate-Limit-Problem`` (``minute`` or ``day``) and the remaining
counters; 503 when the organisation is offline. The client raises ``HTTPStatusException``,
``NotFoundException``, ``RateLimitException``, ``AccountingBadRequestException`` (all
``ApiException``) and urllib3's errors for the transport. Faked: the API; real: the generated
client and urllib3."""

from __future__ import annotations

import time
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

FAM = family("xero-python", "fake Xero Accounting API", http_setup, half="heldout13")

_TENANT = "70784a63-d24b-46a9-a4db-0e70a274b056"
_CONTACT = "bd2270c3-8706-4c11-9cfb-000b551c3f51"
_INSTANCE = "f3b2a9c1-6e4d-4b8a-9c7e-2d1f0a3b5c6d"


def _api(url: str) -> Any:
    from xero_python.accounting import AccountingApi  # type: ignore[import-untyped]
    from xero_python.api_client import ApiClient  # type: ignore[import-untyped]
    from xero_python.api_client.configuration import Configuration  # type: ignore[import-untyped]
    from xero_python.api_client.oauth2 import OAuth2Token  # type: ignore[import-untyped]

    token = {
        "access_token": "eyJhbGciOiJSUzI1NiIsImtpZCI6IlBMQU5URUQifQ.PLANTED.sig",
        "refresh_token": "PLANTED-refresh-4c1f9e7a2b",
        "token_type": "Bearer",
        "scope": ["offline_access", "accounting.contacts"],
        "expires_in": 1800,
        "expires_at": time.time() + 1800,
    }
    client = ApiClient(
        Configuration(
            oauth2_token=OAuth2Token(
                client_id="PLANTEDCLIENT0A1B2C3", client_secret="PLANTED-secret"
            )
        ),
        oauth2_token_getter=lambda: token,
        oauth2_token_saver=lambda t: None,
    )
    # urllib3 would otherwise retry three times, sleeping out each Retry-After
    client.rest_client.pool_manager.connection_pool_kw["retries"] = 0
    return AccountingApi(client, base_url=url + "/api.xro/2.0")


def _get_contact(url: str) -> Any:
    return _api(url).get_contact(_TENANT, _CONTACT, _request_timeout=1)


def _create_contact(url: str) -> Any:
    from xero_python.accounting import Contact, Contacts

    contacts = Contacts(contacts=[Contact(name="Acme Ltd", email_address="ap@acme.example")])
    return _api(url).create_contacts(_TENANT, contacts, _request_timeout=1)


def _problem(status: int, title: str, detail: str) -> dict[str, Any]:
    return {
        "Type": None,
        "Title": title,
        "Status": status,
        "Detail": detail,
        "Instance": _INSTANCE,
        "Extensions": {},
    }


def _validation(message: str) -> dict[str, Any]:
    return {
        "ErrorNumber": 10,
        "Type": "ValidationException",
        "Message": "A validation exception occurred",
        "Elements": [
            {
                "ContactID": "00000000-0000-0000-0000-000000000000",
                "Name": "Acme Ltd",
                "EmailAddress": "ap@acme.example",
                "ValidationErrors": [{"Message": message}],
            }
        ],
    }


def _limits(problem: str, retry_after: str, day: str, minute: str) -> dict[str, str]:
    return {
        "Retry-After": retry_after,
        "X-Rate-Limit-Problem": problem,
        "X-DayLimit-Remaining": day,
        "X-MinLimit-Remaining": minute,
        "X-AppMinLimit-Remaining": "9843",
    }


GET: list[Row] = [
    (
        "bad_token",
        401,
        _problem(401, "Unauthorized", "AuthenticationUnsuccessful"),
        {"WWW-Authenticate": 'Bearer error="invalid_token"'},
        AUTH,
        None,
        "the access token is not one Xero issued",
    ),
    (
        "token_expired",
        401,
        _problem(401, "Unauthorized", "TokenExpired: token expired at 11/29/2026 20:58:12"),
        {
            "WWW-Authenticate": 'Bearer error="invalid_token", error_description="The access'
            ' token has expired"'
        },
        AUTH,
        None,
        "the access token expired on Xero's side before its local expiry",
    ),
    (
        "tenant_not_connected",
        403,
        _problem(403, "Forbidden", "AuthenticationUnsuccessful"),
        {},
        AUTH,
        None,
        "the organisation disconnected the app (the tenant id is no longer granted)",
    ),
    (
        "contact_missing",
        404,
        "The resource you're looking for cannot be found",
        {"Content-Type": "text/html; charset=utf-8"},
        NF,
        None,
        "no contact with this id in the organisation",
    ),
    (
        "minute_limit",
        429,
        "",
        _limits("minute", "27", "4871", "0"),
        RL,
        27.0,
        "the per-minute call limit for the tenant, with its delay",
    ),
    (
        "day_limit",
        429,
        "",
        _limits("day", "37541", "0", "58"),
        RL | QUOTA,
        37541.0,
        "the tenant's daily call allowance is spent, with the time to its reset",
    ),
    (
        "org_offline",
        503,
        "The Organisation is offline",
        {"Content-Type": "text/html; charset=utf-8"},
        NET,
        None,
        "the organisation is temporarily unavailable (being restored)",
    ),
    (
        "internal",
        500,
        {
            "ErrorNumber": 500,
            "Type": "UnknownErrorException",
            "Message": "An error occurred in Xero. Check the API Status page"
            " http://status.developer.xero.com for current service status.",
        },
        {},
        NET,
        None,
        "Xero failed serving the request",
    ),
]
http_cases(FAM, _get_contact, GET)

CREATE: list[Row] = [
    (
        "name_taken",
        400,
        _validation(
            "The contact name Acme Ltd is already assigned to another contact. The contact name"
            " must be unique across all active contacts."
        ),
        {},
        EXISTS,
        None,
        "an active contact of that name exists already",
    ),
    (
        "bad_email",
        400,
        _validation("Email address must be valid."),
        {},
        INT,
        None,
        "the caller's contact carries an invalid e-mail address",
    ),
]
http_cases(FAM, _create_contact, CREATE, transport=False)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: _get_contact(f"http://127.0.0.1:{c.net.garbage}"),
)
