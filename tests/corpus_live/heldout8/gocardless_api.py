"""gocardless-pro (GoCardless's official Python client, over requests) against a fake
GoCardless API on 127.0.0.1 (``base_url=``, a 0.4 s timeout; the client's own three attempts
on network failures and unreadable answers stay on, 0.5 s apart). Errors are GoCardless's
``{"error": {"message", "documentation_url", "type", "request_id", "errors": [{"reason",
"message", ...}], "code"}}`` bodies; a throttled integration is told when its window resets
in GoCardless's rate-limit headers (an HTTP date). The client raises ``AuthenticationError``,
``PermissionsError`` and ``RateLimitError`` by status, otherwise by ``type``:
``InvalidApiUsageError``, ``ValidationFailedError``, ``InvalidStateError``,
``IdempotentCreationConflictError`` (the pack asks to see it rather than fetch the existing
resource), ``GoCardlessInternalError``; ``MalformedResponseError`` for a body that is not
JSON; requests' exceptions from the transport."""

from __future__ import annotations

import time
from email.utils import formatdate
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
)

FAM = family("gocardless-pro", "fake GoCardless API", http_setup, half="heldout8")

_TOKEN = "sandbox_PLANTEDgcTok3n-0a1b2c3d4e5f6g7h8i9j"
_DOCS = "https://developer.gocardless.com/api-reference#"


def _client(url: str) -> Any:
    import gocardless_pro

    return gocardless_pro.Client(
        access_token=_TOKEN, base_url=url, timeout=0.4, raise_on_idempotency_conflict=True
    )


def _get_mandate(url: str) -> Any:
    return _client(url).mandates.get("MD000YTKJ9BD3E")


def _create_payment(url: str) -> Any:
    params = {
        "amount": 4500,
        "currency": "GBP",
        "charge_date": "2026-12-15",
        "links": {"mandate": "MD000YTKJ9BD3E"},
    }
    return _client(url).payments.create(
        params=params, headers={"Idempotency-Key": "invoice-2026-11-0193"}
    )


def _err(
    type_: str, code: int, message: str, *errors: dict[str, Any], anchor: str = ""
) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "documentation_url": _DOCS + (anchor or f"{type_}"),
            "type": type_,
            "request_id": "0AA4LQ8BY3ZR1G7C0E2TPQ9S",
            "errors": list(errors) or [{"reason": type_, "message": message}],
            "code": code,
        }
    }


GET: list[Row] = [
    (
        "token_not_found",
        401,
        _err(
            "invalid_api_usage",
            401,
            "Access token not found",
            {"reason": "access_token_not_found", "message": "Access token not found"},
            anchor="api-usage-access-token-not-found",
        ),
        {},
        AUTH,
        None,
        "the access token is unknown (a sandbox token on live, or revoked)",
    ),
    (
        "insufficient_permissions",
        403,
        _err(
            "invalid_api_usage",
            403,
            "Insufficient permissions",
            {"reason": "insufficient_permissions", "message": "Insufficient permissions"},
            anchor="api-usage-insufficient-permissions",
        ),
        {},
        AUTH,
        None,
        "a read-only access token",
    ),
    (
        "no_mandate",
        404,
        _err(
            "invalid_api_usage",
            404,
            "Resource not found",
            {"reason": "resource_not_found", "message": "Resource not found"},
            anchor="api-usage-resource-not-found",
        ),
        {},
        NF,
        None,
        "no mandate with that id",
    ),
    (
        "internal",
        500,
        _err(
            "gocardless",
            500,
            "Uh-oh! Something went wrong. We've been notified and are looking into it.",
            {"reason": "internal_server_error", "message": "Internal server error"},
        ),
        {},
        NET,
        None,
        "GoCardless failed",
    ),
]
http_cases(FAM, _get_mandate, GET)
http_cases(
    FAM,
    _get_mandate,
    [
        (
            "proxy_502",
            502,
            "<html><body><h1>502 Bad Gateway</h1>The server returned an invalid or incomplete "
            "response.</body></html>\n",
            {},
            NET,
            None,
            "a load balancer's HTML page, on each of the client's three attempts",
        )
    ],
    content_type="text/html",
    transport=False,
)

CREATE: list[Row] = [
    (
        "amount_invalid",
        422,
        _err(
            "validation_failed",
            422,
            "Validation failed",
            {
                "field": "amount",
                "message": "must be greater than or equal to 100",
                "request_pointer": "/payments/amount",
            },
            anchor="validation-failed",
        ),
        {},
        INT,
        None,
        "the amount is below the scheme's minimum (the pack's input)",
    ),
    (
        "mandate_inactive",
        422,
        _err(
            "invalid_state",
            422,
            "The mandate for this payment was cancelled",
            {
                "reason": "mandate_is_inactive",
                "message": "The mandate for this payment was cancelled",
            },
            anchor="state-mandate-is-inactive",
        ),
        {},
        INT | NF,
        None,
        "the mandate was cancelled: it cannot be charged",
    ),
    (
        "idempotent_conflict",
        409,
        _err(
            "invalid_state",
            409,
            "A resource has already been created with this idempotency key",
            {
                "reason": "idempotent_creation_conflict",
                "message": "A resource has already been created with this idempotency key",
                "links": {"conflicting_resource_id": "PM00B8HQZ2K4XN"},
            },
            anchor="state-idempotent-creation-conflict",
        ),
        {},
        EXISTS,
        None,
        "the payment was created before under that idempotency key",
    ),
]
http_cases(FAM, _create_payment, CREATE, transport=False)


def _rate_limited(ctx: Http) -> Any:
    headers = {
        "RateLimit-Limit": "1000",
        "RateLimit-Remaining": "0",
        "RateLimit-Reset": formatdate(int(time.time()) + 6, usegmt=True),
    }
    body = _err(
        "invalid_api_usage",
        429,
        "Rate limit exceeded",
        {"reason": "rate_limit_exceeded", "message": "Rate limit exceeded"},
        anchor="api-usage-rate-limit-exceeded",
    )
    ctx.http.set(429, body, headers)
    return _get_mandate(ctx.http.url)


FAM.add(
    "rate_limited",
    RL,
    "HTTP 429: the integration's per-minute budget is spent, the reset as an HTTP date",
    _rate_limited,
    retry_after=6.0,
)


def _no_token(ctx: Http) -> Any:
    import gocardless_pro

    return gocardless_pro.Client(access_token=None, base_url=ctx.http.url)


FAM.add(
    "no_token",
    AUTH | INT,
    "no access token configured: the client refuses to start",
    _no_token,
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: _get_mandate(f"http://127.0.0.1:{c.net.garbage}"),
)
