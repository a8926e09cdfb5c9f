"""docusign-esign (DocuSign's Swagger-Codegen generated eSignature REST API v2.1 client over
urllib3) against a fake eSignature API on 127.0.0.1 (``ApiClient(host=...)``, a bearer
token, ``_request_timeout=1`` per call). DocuSign answers errors as ``{"errorCode": ...,
"message": ...}`` and, as its error-code reference documents, nearly all of them on HTTP 400
(an unknown envelope and missing permissions included); expired tokens on 401; the hourly
API limit on 429 with the reset in ``X-RateLimit-Reset`` (epoch seconds). The client raises
``ApiException`` (status, reason, body) for every failing status and lets urllib3's errors
through for the transport; the transport cases create an envelope (a POST, which urllib3 does
not retry after a read timeout). Faked: the API; real: the generated client and urllib3."""

from __future__ import annotations

import importlib
import time
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

FAM = family("docusign-esign", "fake DocuSign eSignature API", http_setup, half="heldout12")

_ACCOUNT = "9f3b2c1d-4e5f-4a6b-8c7d-0e1f2a3b4c5d"
_ENVELOPE = "2d8a5c41-7b3e-4f90-a1c6-93e0b7d2f548"
_H = {"X-DocuSign-TraceToken": "6c0e1f4a-2b3d-4c5e-9f8a-7b6c5d4e3f21", "Cache-Control": "no-cache"}


def _sdk() -> Any:
    return importlib.import_module("docusign_esign")


def _api(url: str) -> Any:
    sdk = _sdk()
    client = sdk.ApiClient(host=url + "/restapi")
    client.set_default_header("Authorization", "Bearer eyJ0eXAiOiJNVCIsImFsZyI6IlJTMjU2In0.PLANTED")
    return sdk.EnvelopesApi(client)


def _get(url: str) -> Any:
    return _api(url).get_envelope(_ACCOUNT, _ENVELOPE, _request_timeout=1)


def _send(url: str) -> Any:
    sdk = _sdk()
    envelope = sdk.EnvelopeDefinition(
        email_subject="Please sign the NDA",
        template_id="8b1c3d5e-0f2a-4b6c-9d8e-7f6a5b4c3d2e",
        template_roles=[sdk.TemplateRole(email="ada@example", name="Ada", role_name="Signer 1")],
        status="sent",
    )
    return _api(url).create_envelope(_ACCOUNT, envelope_definition=envelope, _request_timeout=1)


def _err(code: str, message: str) -> dict[str, str]:
    return {"errorCode": code, "message": message}


GET: list[Row] = [
    (
        "token_expired",
        401,
        _err(
            "AUTHORIZATION_INVALID_TOKEN",
            "The access token provided is expired, revoked or malformed. Authentication for"
            " System Application failed.",
        ),
        _H,
        AUTH,
        None,
        "the OAuth access token has expired",
    ),
    (
        "user_auth_failed",
        401,
        _err(
            "USER_AUTHENTICATION_FAILED",
            "One or both of Username and Password are invalid. Invalid access token",
        ),
        _H,
        AUTH,
        None,
        "the credentials are refused",
    ),
    (
        "envelope_missing",
        400,
        _err(
            "ENVELOPE_DOES_NOT_EXIST",
            "The envelope specified either does not exist or you have no rights to it.",
        ),
        _H,
        NF,
        None,
        "no such envelope in the account (DocuSign answers 400)",
    ),
    (
        "lacks_permissions",
        400,
        _err(
            "USER_LACKS_PERMISSIONS",
            "This user lacks sufficient permissions to access this resource.",
        ),
        _H,
        AUTH,
        None,
        "the user's permission profile forbids the call (DocuSign answers 400)",
    ),
    (
        "account_not_found",
        400,
        _err("INVALID_ACCOUNTID", "Invalid account ID."),
        _H,
        NF | INT,
        None,
        "the account id in the path is not one of the user's accounts",
    ),
    (
        "service_unavailable",
        503,
        "<!DOCTYPE html><html><head><title>Service Unavailable</title></head><body><h1>Service"
        " Unavailable</h1><p>DocuSign is temporarily unavailable. Please try again later.</p>"
        "</body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "DocuSign's front end answered a maintenance page",
    ),
]
http_cases(FAM, _get, GET, transport=False)

SEND: list[Row] = [
    (
        "bad_recipient_email",
        400,
        _err(
            "INVALID_EMAIL_ADDRESS_FOR_RECIPIENT",
            "The email address for the recipient is invalid. The recipient Id follows.",
        ),
        _H,
        INT,
        None,
        "the caller's signer email is malformed",
    ),
    (
        "template_missing",
        400,
        _err("TEMPLATE_ID_INVALID", "Invalid template ID."),
        _H,
        NF | INT,
        None,
        "the template named by the caller does not exist",
    ),
    (
        "envelope_incomplete",
        400,
        _err(
            "ENVELOPE_IS_INCOMPLETE",
            "The Envelope is not Complete. A Complete Envelope Requires Documents, Recipients,"
            " Tabs, and a Subject Line.",
        ),
        _H,
        INT,
        None,
        "the caller's envelope lacks what sending needs",
    ),
    (
        "internal",
        500,
        _err("UNSPECIFIED_ERROR", "An unexpected error occurred processing the request."),
        _H,
        NET,
        None,
        "DocuSign failed",
    ),
]
http_cases(FAM, _send, SEND)


def _hourly_limit(ctx: Http) -> Any:
    headers = {
        **_H,
        "X-RateLimit-Limit": "3000",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": str(int(time.time() + 1800)),
    }
    body = _err(
        "HOURLY_APIINVOCATION_LIMIT_EXCEEDED",
        "The maximum number of hourly API invocations has been exceeded. The hourly limit is 3000.",
    )
    ctx.http.set(429, body, headers)
    return _get(ctx.http.url)


FAM.add(
    "hourly_limit",
    RL,
    "HTTP 429: the account's hourly API limit is spent, the reset as epoch seconds",
    _hourly_limit,
    retry_after=1800.0,
)
