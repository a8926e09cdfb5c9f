"""increase (Increase's banking and payments API, a Stainless client on httpx): its async
client ``AsyncIncrease`` moves money between two accounts against a fake Increase API on
127.0.0.1 answering the errors Increase documents (``{"status", "type", "title",
"detail"}`` bodies, one ``type`` word per kind of error): a deleted or expired API key, a
key of the other environment, a missing permission, a private feature, an unknown account,
a reused idempotency key, an operation the account's state forbids, invalid parameters and
a malformed body, rate limits (the delay in the body's ``retry_after``, no header), server
errors and a proxy's page; plus the client's own timeout and the transport failures. The
client's retries are off (``max_retries=0``); every case runs on an event loop of its own."""

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

FAM = family("increase", "fake Increase API", http_setup, half="heldout20")


async def _transfer_async(url: str) -> Any:
    from increase import AsyncIncrease

    client = AsyncIncrease(
        api_key="PLANTED_secret_key_7kq2m9xw", base_url=url, max_retries=0, timeout=1
    )
    async with client:
        return await client.account_transfers.create(
            account_id="account_in71c4amph0vgo2qllky",
            destination_account_id="account_uf16sut2ct5bevmq3eh",
            amount=145000,
            description="Invoice A-99812",
            extra_headers={"Idempotency-Key": "transfer-A-99812"},
        )


def _transfer(url: str) -> Any:
    return run_async(_transfer_async(url))


def _e(status: int, type: str, title: str, detail: str | None = None, **more: Any) -> Any:
    return {"status": status, "type": type, "title": title, "detail": detail, **more}


ROWS: list[Row] = [
    (
        "deleted_key",
        401,
        _e(
            401,
            "invalid_api_key_error",
            "Invalid API Key.",
            "The API key you provided has been deleted.",
            reason="deleted_credential",
        ),
        {},
        AUTH,
        None,
        "invalid_api_key_error: the API key was deleted",
    ),
    (
        "expired_key",
        401,
        _e(
            401,
            "invalid_api_key_error",
            "Invalid API Key.",
            "The OAuth token you provided has expired.",
            reason="expired_credential",
        ),
        {},
        AUTH,
        None,
        "invalid_api_key_error: the credential has expired",
    ),
    (
        "environment_mismatch",
        403,
        _e(
            403,
            "environment_mismatch_error",
            "You're using a production API key to access a sandbox resource, or vice versa.",
        ),
        {},
        AUTH,
        None,
        "environment_mismatch_error: the key belongs to the other environment",
    ),
    (
        "insufficient_permissions",
        403,
        _e(
            403,
            "insufficient_permissions_error",
            "Your API key doesn't have permission to perform this action.",
        ),
        {},
        AUTH,
        None,
        "insufficient_permissions_error: the key may not create transfers",
    ),
    (
        "private_feature",
        403,
        _e(
            403,
            "private_feature_error",
            "This feature isn't available for your account. Please contact support.",
        ),
        {},
        AUTH,
        None,
        "private_feature_error: account transfers are not enabled for this group",
    ),
    (
        "account_missing",
        404,
        _e(
            404,
            "object_not_found_error",
            "Could not find the specified object.",
            "No Account with id account_in71c4amph0vgo2qllky exists.",
        ),
        {},
        NF,
        None,
        "object_not_found_error: the source account does not exist",
    ),
    (
        "idempotency_reused",
        409,
        _e(
            409,
            "idempotency_key_already_used_error",
            "The idempotency key has already been used.",
            "The idempotency key transfer-A-99812 was already used for another request.",
            resource_id="account_transfer_7k3mq2x9w1",
        ),
        {},
        EXISTS,
        None,
        "idempotency_key_already_used_error: a transfer was already made under this key",
    ),
    (
        "invalid_operation",
        409,
        _e(
            409,
            "invalid_operation_error",
            "The operation you tried to perform isn't allowed.",
            "The Account is closed and cannot originate transfers.",
        ),
        {},
        INT,
        None,
        "invalid_operation_error: the account's state forbids the transfer",
    ),
    (
        "invalid_parameters",
        400,
        _e(
            400,
            "invalid_parameters_error",
            "One or more of your request parameters is invalid.",
            errors=[{"field": "amount", "message": "must be greater than 0"}],
        ),
        {},
        INT,
        None,
        "invalid_parameters_error: a field of the transfer is invalid (the caller's input)",
    ),
    (
        "malformed_request",
        400,
        _e(400, "malformed_request_error", "Your request could not be parsed as JSON."),
        {},
        INT,
        None,
        "malformed_request_error: the body is not valid JSON",
    ),
    (
        "rate_limited",
        429,
        _e(
            429,
            "rate_limited_error",
            "You've exceeded the rate limit.",
            "Please wait before making further requests.",
            retry_after=4,
        ),
        {},
        RL,
        4.0,
        "rate_limited_error: the delay comes only in the body's retry_after field",
    ),
    (
        "internal",
        500,
        _e(500, "internal_server_error", "Something went wrong on our end."),
        {},
        NET,
        None,
        "internal_server_error: the API failed",
    ),
    (
        "gateway_timeout",
        504,
        "<html><head><title>504 Gateway Time-out</title></head><body>"
        "<center><h1>504 Gateway Time-out</h1></center></body></html>",
        {"Content-Type": "text/html"},
        NET | TO,
        None,
        "the load balancer timed out waiting for the API (an HTML page)",
    ),
]
http_cases(FAM, _transfer, ROWS)
