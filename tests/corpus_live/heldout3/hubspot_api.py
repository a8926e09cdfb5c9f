"""hubspot-api-client (HubSpot's OpenAPI-generated SDK) against a fake HubSpot CRM API
answering its documented error bodies (``{"status": "error", "message": ...,
"category": "OBJECT_NOT_FOUND", "correlationId": ...}``, ``errorType: RATE_LIMIT`` on 429)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("hubspot", "fake HubSpot CRM API v3", http_setup, half="heldout3")


def _contacts(url: str) -> Any:
    from hubspot import HubSpot
    from urllib3.util.retry import Retry

    client = HubSpot(access_token="pat-na1-PLANTED-hubspot", host=url, retry=Retry(total=0))
    return client.crm.contacts.basic_api


def _get(url: str) -> Any:
    return _contacts(url).get_by_id("1201", _request_timeout=1)


def _create(url: str) -> Any:
    from hubspot.crm.contacts import SimplePublicObjectInputForCreate

    body = SimplePublicObjectInputForCreate(properties={"email": "bob@example.org"})
    return _contacts(url).create(simple_public_object_input_for_create=body, _request_timeout=1)


def _e(category: str, message: str, **extra: Any) -> dict[str, Any]:
    return {
        "status": "error",
        "message": message,
        "correlationId": "aeb5f871-7f07-4993-9211-075dc63e7cbf",
        "category": category,
        **extra,
    }


GET: list[Row] = [
    (
        "contact_not_found",
        404,
        _e("OBJECT_NOT_FOUND", "Object not found.  objectId are usually numeric."),
        {},
        NF,
        None,
        "the contact does not exist",
    ),
    (
        "bad_token",
        401,
        _e(
            "INVALID_AUTHENTICATION",
            "Authentication credentials not found. This API supports OAuth 2.0 authentication "
            "and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview",
        ),
        {},
        AUTH,
        None,
        "the access token is invalid",
    ),
    (
        "missing_scopes",
        403,
        _e(
            "MISSING_SCOPES",
            "This app hasn't been granted all required scopes to make this call. Read more about "
            "required scopes here: https://developers.hubspot.com/scopes.",
            errors=[
                {
                    "message": "One or more of the following scopes are required.",
                    "context": {"requiredGranularScopes": ["crm.objects.contacts.read"]},
                }
            ],
        ),
        {},
        AUTH,
        None,
        "the app lacks crm.objects.contacts.read",
    ),
    (
        "rate_limited",
        429,
        {
            "status": "error",
            "message": "You have reached your secondly limit.",
            "errorType": "RATE_LIMIT",
            "correlationId": "c033cdaa-2c40-4a64-ae48-b4cec88dad24",
            "policyName": "SECONDLY",
        },
        {"X-HubSpot-RateLimit-Secondly": "10", "X-HubSpot-RateLimit-Secondly-Remaining": "0"},
        RL,
        None,
        "the app's per-second limit",
    ),
    (
        "internal",
        500,
        _e("INTERNAL_ERROR", "internal error"),
        {},
        NET,
        None,
        "HubSpot failed",
    ),
    (
        "bad_gateway",
        502,
        "<html><body><h1>502 Bad Gateway</h1></body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the edge's HTML page",
    ),
]
http_cases(FAM, _get, GET)
http_cases(
    FAM,
    _create,
    [
        (
            "contact_exists",
            409,
            _e("CONFLICT", "Contact already exists. Existing ID: 1201"),
            {},
            EXISTS,
            None,
            "a contact with that email exists",
        ),
        (
            "validation",
            400,
            _e(
                "VALIDATION_ERROR",
                'Property values were not valid: [{"isValid":false,"message":"Email address '
                'bob@example is invalid","error":"INVALID_EMAIL","name":"email"}]',
            ),
            {},
            INT,
            None,
            "the email is invalid (the pack's input)",
        ),
    ],
    transport=False,
)
