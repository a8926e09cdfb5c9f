"""simple-salesforce (a Salesforce REST API client over requests) against a fake Salesforce
REST API on 127.0.0.1: the client is built from a session id and an instance URL, as a pack
holding an OAuth access token does, then pointed at the fake (it only speaks https to
``instance_url``, so the pack sets ``base_url`` / the sObject's ``base_url`` to the fake's
``http://`` address). Errors are Salesforce's documented REST bodies, a JSON list of
``{"message", "errorCode", "fields"}``: ``INVALID_SESSION_ID`` (401), ``MALFORMED_QUERY`` /
``INVALID_FIELD`` / ``REQUIRED_FIELD_MISSING`` / ``DUPLICATE_VALUE`` / ``DUPLICATES_DETECTED``
/ ``STORAGE_LIMIT_EXCEEDED`` (400), ``REQUEST_LIMIT_EXCEEDED`` and ``API_DISABLED_FOR_ORG``
(403), ``NOT_FOUND`` (404), ``UNKNOWN_EXCEPTION`` (500), ``SERVER_UNAVAILABLE`` (503). The
client raises ``SalesforceMalformedRequest`` (400), ``SalesforceExpiredSession`` (401),
``SalesforceRefusedRequest`` (403), ``SalesforceResourceNotFound`` (404) or
``SalesforceGeneralError``, each with the URL, status, resource name and the decoded body;
the transport raises requests' exceptions (queries carry ``timeout=1``)."""

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

FAM = family("simple-salesforce", "fake Salesforce REST API", http_setup, half="heldout7")

_VERSION = "59.0"
_H = {"Sforce-Limit-Info": "api-usage=14982/15000"}


def _sf(url: str) -> Any:
    from simple_salesforce.api import Salesforce

    sf = Salesforce(
        instance_url="https://acme.my.salesforce.com",
        session_id="00D5e000000PLANT!AQ4AQFakeAccessTokenForTheCorpus7b",
        version=_VERSION,
    )
    sf.base_url = f"{url}/services/data/v{_VERSION}/"
    return sf


def _query(url: str) -> Any:
    return _sf(url).query(
        "SELECT Id, Email FROM Contact WHERE AccountId = '0015e00000Qw3rT'", timeout=1
    )


def _create(url: str) -> Any:
    contacts = _sf(url).Contact
    contacts.base_url = f"{url}/services/data/v{_VERSION}/sobjects/Contact/"
    return contacts.create(
        {"LastName": "Okafor", "Email": "n.okafor@example.com", "Ext_Id__c": "C-1042"}
    )


def _get(url: str) -> Any:
    contacts = _sf(url).Contact
    contacts.base_url = f"{url}/services/data/v{_VERSION}/sobjects/Contact/"
    return contacts.get("0035e00000Zx9Qa", timeout=1)


def _err(code: str, message: str, fields: list[str] | None = None) -> list[dict[str, Any]]:
    return [{"message": message, "errorCode": code, "fields": fields or []}]


QUERY: list[Row] = [
    (
        "session_expired",
        401,
        _err("INVALID_SESSION_ID", "Session expired or invalid"),
        {},
        AUTH,
        None,
        "the OAuth access token expired or was revoked",
    ),
    (
        "api_disabled",
        403,
        _err("API_DISABLED_FOR_ORG", "The REST API is not enabled for this Organization."),
        {},
        AUTH,
        None,
        "the org's edition or the user's profile has no API access",
    ),
    (
        "daily_limit",
        403,
        _err("REQUEST_LIMIT_EXCEEDED", "TotalRequests Limit exceeded."),
        {"Sforce-Limit-Info": "api-usage=15000/15000"},
        QUOTA | RL,
        None,
        "the org's rolling 24-hour API request allocation is used up",
    ),
    (
        "concurrent_limit",
        403,
        _err("REQUEST_LIMIT_EXCEEDED", "ConcurrentPerOrgLongTxn Limit exceeded."),
        _H,
        RL,
        None,
        "too many long-running requests at once in the org",
    ),
    (
        "malformed_query",
        400,
        _err(
            "INVALID_FIELD",
            "\nSELECT Id, Email FROM Contact WHERE AccountId\n                                    ^\n"
            "ERROR at Row:1:Column:37\nNo such column 'AccountId' on entity 'Contact'. If you are "
            "attempting to use a custom field, be sure to append the '__c' after the custom field "
            "name. Please reference your WSDL or the describe call for the appropriate names.",
        ),
        _H,
        INT,
        None,
        "the SOQL names a field that does not exist (the pack's input)",
    ),
    (
        "unknown_exception",
        500,
        _err(
            "UNKNOWN_EXCEPTION",
            "An unexpected error occurred. Please include this ErrorId if you contact support: "
            "1479532841-40386 (-1023387652)",
        ),
        _H,
        NET,
        None,
        "Salesforce failed",
    ),
    (
        "unavailable",
        503,
        _err("SERVER_UNAVAILABLE", "Server temporarily unavailable"),
        _H,
        NET,
        None,
        "the instance is unavailable (maintenance or overload)",
    ),
]
http_cases(FAM, _query, QUERY)

GET: list[Row] = [
    (
        "not_found",
        404,
        _err("NOT_FOUND", "The requested resource does not exist"),
        _H,
        NF,
        None,
        "no contact with that id (deleted, or another org's)",
    ),
]
http_cases(FAM, _get, GET, transport=False)

CREATE: list[Row] = [
    (
        "duplicate_value",
        400,
        _err(
            "DUPLICATE_VALUE",
            "duplicate value found: Ext_Id__c duplicates value on record with id: 0035e00000Zx9Qa",
        ),
        _H,
        EXISTS,
        None,
        "a contact with that external id already exists",
    ),
    (
        "duplicates_detected",
        400,
        [
            {
                "duplicateResult": {
                    "allowSave": False,
                    "duplicateRule": "Standard_Contact_Duplicate_Rule",
                    "duplicateRuleEntityType": "Contact",
                    "errorMessage": "You're creating a duplicate record. We recommend you use an existing record instead.",
                    "matchResults": [],
                },
                "errorCode": "DUPLICATES_DETECTED",
                "message": "You're creating a duplicate record. We recommend you use an existing record instead.",
            }
        ],
        _H,
        EXISTS,
        None,
        "the org's duplicate rule matched an existing contact",
    ),
    (
        "required_missing",
        400,
        _err("REQUIRED_FIELD_MISSING", "Required fields are missing: [AccountId]", ["AccountId"]),
        _H,
        INT,
        None,
        "a required field is missing (the pack's input)",
    ),
    (
        "storage_full",
        400,
        _err(
            "STORAGE_LIMIT_EXCEEDED",
            "storage limit exceeded",
        ),
        _H,
        QUOTA,
        None,
        "the org's data storage is full",
    ),
]
http_cases(FAM, _create, CREATE, transport=False)
