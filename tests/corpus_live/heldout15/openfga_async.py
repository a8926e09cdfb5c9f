"""openfga-sdk (OpenFGA's Python SDK, an OpenAPI Generator client; here its asyncio client on
aiohttp) against a fake OpenFGA HTTP API answering its documented error bodies
(``{"code", "message"}``, the codes of OpenFGA's ``ErrorCode``, ``NotFoundErrorCode``,
``AuthErrorCode`` and ``InternalErrorCode`` enums) and statuses: 401 and 403 from the preshared
key or OIDC check, 404 unknown store or model, 400 invalid tuples and duplicate writes, 409 a
transaction conflict, 422 a throttled check, 429 with ``Retry-After``, 500 and 504; plus the
client's own timeout and the transport failures."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    RL,
    TO,
    Row,
    family,
    http_cases,
    http_setup,
    run_async,
)

FAM = family("openfga", "fake OpenFGA API", http_setup, half="heldout15")

_STORE = "01JD4H5XKQ3W7N2B9C8F6M4P0R"
_MODEL = "01JD4H6A2V9S3T5Y7Z1X8W6Q4E"


async def _write(url: str) -> Any:
    from openfga_sdk.client import ClientConfiguration, OpenFgaClient
    from openfga_sdk.client.models import ClientTuple, ClientWriteRequest
    from openfga_sdk.configuration import RetryParams
    from openfga_sdk.credentials import CredentialConfiguration, Credentials

    config = ClientConfiguration(
        api_url=url,
        store_id=_STORE,
        authorization_model_id=_MODEL,
        credentials=Credentials(
            method="api_token",
            configuration=CredentialConfiguration(api_token="PLANTEDopenfgapresharedkey"),
        ),
        retry_params=RetryParams(max_retry=0),  # type: ignore[no-untyped-call]
        timeout_millisec=1000,
    )
    async with OpenFgaClient(config) as client:
        return await client.write(
            ClientWriteRequest(
                writes=[ClientTuple(user="user:anne", relation="reader", object="document:roadmap")]
            )
        )


def _call(url: str) -> Any:
    return run_async(_write(url))


def _e(code: str, message: str) -> dict[str, Any]:
    return {"code": code, "message": message}


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _e("unauthenticated", "unauthenticated"),
        {},
        AUTH,
        None,
        "the preshared key is not accepted",
    ),
    (
        "invalid_token",
        401,
        _e("invalid_claims", "invalid claims"),
        {},
        AUTH,
        None,
        "the OIDC token's claims (issuer, audience) are not accepted",
    ),
    (
        "forbidden",
        403,
        _e("forbidden", "the principal is not authorized to perform the action"),
        {},
        AUTH,
        None,
        "the client's credentials lack the permission to write tuples",
    ),
    (
        "store_not_found",
        404,
        _e("store_id_not_found", f"store_id '{_STORE}' not found"),
        {},
        NF,
        None,
        "the store does not exist",
    ),
    (
        "model_not_found",
        400,
        _e(
            "authorization_model_not_found",
            f"Authorization Model '{_MODEL}' not found",
        ),
        {},
        NF | INT,
        None,
        "the authorization model does not exist (OpenFGA answers 400)",
    ),
    (
        "duplicate_tuple",
        400,
        _e(
            "write_failed_due_to_invalid_input",
            "cannot write a tuple which already exists: user: 'user:anne', relation: 'reader', object: 'document:roadmap': tuple to be written already existed or the tuple to be deleted did not exist",
        ),
        {},
        EXISTS | INT,
        None,
        "the tuple is already written",
    ),
    (
        "unknown_relation",
        400,
        _e(
            "validation_error",
            "Invalid tuple 'document:roadmap#reader@user:anne'. Reason: relation 'document#reader' not found",
        ),
        {},
        INT,
        None,
        "the tuple names a relation the model does not define (the caller's input)",
    ),
    (
        "transaction_conflict",
        409,
        _e("transaction_conflict", "transaction conflict"),
        {},
        NET | RL | INT,
        None,
        "a concurrent write conflicted: retrying may pass",
    ),
    (
        "throttled",
        422,
        _e(
            "throttled_timeout_error",
            "timeout due to throttling on complex request",
        ),
        {},
        RL | TO,
        None,
        "the server throttled the request until its deadline passed",
    ),
    (
        "rate_limited",
        429,
        _e("rate_limit_exceeded", "Rate Limit exceeded"),
        {"Retry-After": "2", "X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "0"},
        RL,
        2.0,
        "over the API's rate limit, with the server's delay",
    ),
    (
        "internal",
        500,
        _e("internal_error", "Internal Server Error"),
        {},
        NET,
        None,
        "OpenFGA failed",
    ),
    (
        "deadline",
        504,
        _e("deadline_exceeded", "context deadline exceeded"),
        {},
        TO,
        None,
        "the request ran past OpenFGA's own deadline",
    ),
]
http_cases(FAM, _call, ROWS)
