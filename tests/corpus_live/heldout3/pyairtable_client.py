"""pyairtable against a fake Airtable Web API answering its documented error bodies
(``{"error": {"type": "INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND", "message": ...}}``): error
type words that say more, or less, than the status."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
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

FAM = family("pyairtable", "fake Airtable Web API", http_setup, half="heldout3")


def _table(url: str) -> Any:
    from pyairtable import Api

    api = Api("patPLANTEDairtable.token", timeout=(1, 1), retry_strategy=False, endpoint_url=url)
    return api.table("appPLANTED0000000", "Orders")


def _get(url: str) -> Any:
    return _table(url).get("recPLANTED00000000")


def _create(url: str) -> Any:
    return _table(url).create({"Name": "lamp", "Qty": 2})


def _e(type: str, message: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"type": type}
    if message is not None:
        error["message"] = message
    return {"error": error}


GET: list[Row] = [
    (
        "record_not_found",
        404,
        _e("MODEL_ID_NOT_FOUND", "Could not find a record with ID 'recPLANTED00000000'."),
        {},
        NF,
        None,
        "the record id does not exist",
    ),
    (
        "base_not_found",
        404,
        {"error": "NOT_FOUND"},
        {},
        NF,
        None,
        "the base or table does not exist (a bare error word)",
    ),
    (
        "auth_required",
        401,
        _e("AUTHENTICATION_REQUIRED", "Authentication required"),
        {},
        AUTH,
        None,
        "the token is missing or invalid",
    ),
    (
        "no_permission_or_missing",
        403,
        _e(
            "INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND",
            "Invalid permissions, or the requested model was not found. Check that both your "
            "user and your token have the required permissions, and that the model names and/or "
            "ids are correct.",
        ),
        {},
        AUTH | NF,
        None,
        "Airtable will not say which: no permission, or no such table",
    ),
    (
        "rate_limited",
        429,
        _e(
            "RATE_LIMIT_REACHED",
            "Rate limit exceeded. Please try again later",
        ),
        {},
        RL,
        None,
        "5 requests per second per base (Airtable asks for 30 s of waiting)",
    ),
    (
        "billing_limit",
        429,
        _e(
            "PUBLIC_API_BILLING_LIMIT_EXCEEDED",
            "The API call limit for this workspace's plan has been exceeded for the month.",
        ),
        {},
        QUOTA,
        None,
        "a 429 that is the plan's monthly API calls: upgrade or wait for the month",
    ),
    (
        "server_error",
        500,
        _e("SERVER_ERROR", "Try again. If the problem persists, contact support."),
        {},
        NET,
        None,
        "Airtable failed",
    ),
    (
        "unavailable",
        503,
        _e("SERVICE_UNAVAILABLE", "Service Unavailable"),
        {},
        NET,
        None,
        "Airtable is unavailable",
    ),
]
http_cases(FAM, _get, GET)
http_cases(
    FAM,
    _create,
    [
        (
            "unknown_field",
            422,
            _e("UNKNOWN_FIELD_NAME", 'Unknown field name: "Qty"'),
            {},
            INT | NF,
            None,
            "the pack writes a field the table does not have",
        ),
        (
            "invalid_value",
            422,
            _e(
                "INVALID_VALUE_FOR_COLUMN",
                'Field "Qty" cannot accept the provided value: "two"',
            ),
            {},
            INT,
            None,
            "a value of the wrong type (the pack's input)",
        ),
        (
            "too_large",
            413,
            _e("REQUEST_TOO_LARGE", "Request body should be smaller than 5 MB"),
            {},
            INT,
            None,
            "the request is over 5 MB, it never passes",
        ),
    ],
    transport=False,
)
