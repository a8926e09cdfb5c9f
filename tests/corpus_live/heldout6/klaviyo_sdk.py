"""klaviyo-api (Klaviyo's official SDK: a generated ``openapi_client`` over urllib3 wrapped by
``KlaviyoAPI``) against a fake Klaviyo API on 127.0.0.1 (``test_host=``): errors are Klaviyo's
JSON:API bodies ``{"errors": [{"id", "status", "code", "title", "detail", "source"}]}``
(``not_authenticated``, ``permission_denied``, ``not_found``, ``duplicate_profile`` with
``meta.duplicate_profile_id``, ``invalid``, ``throttled`` whose detail says "Expected available
in N seconds" next to ``Retry-After`` and the ``RateLimit-*`` headers, ``error``). The SDK
raises ``openapi_client.exceptions`` (``UnauthorizedException``, ``ForbiddenException``,
``NotFoundException``, ``ConflictException``, ``BadRequestException``, ``ServiceException``,
``ApiException`` for 429) carrying status, body and headers, and urllib3's exceptions on the
transport. The pack lets nothing sleep inside the handler: the wrapper's own retry is off
(``max_retries=1``, one attempt) and so is urllib3's (``retries=False``; it would sleep out
``Retry-After``)."""

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
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("klaviyo-api", "fake Klaviyo API", http_setup, half="heldout6")

_PROFILE = "01GDDKASAP8TKDDA2GRZDSVP4H"


def _klaviyo(url: str) -> Any:
    from klaviyo_api import KlaviyoAPI
    from openapi_client import rest

    k = KlaviyoAPI("pk_PLANTED3f0c9a1b2d4e5f60718293a4b5", max_retries=1, test_host=url)
    k.configuration.retries = False
    k.api_client.rest_client = rest.RESTClientObject(k.configuration)
    return k


def _get_profile(url: str) -> Any:
    return _klaviyo(url).Profiles.get_profile(_PROFILE, _request_timeout=1.0)


def _create_profile(url: str) -> Any:
    body = {"data": {"type": "profile", "attributes": {"email": "sarah.mason@example.com"}}}
    return _klaviyo(url).Profiles.create_profile(body, _request_timeout=1.0)


def _errors(
    status: int,
    code: str,
    title: str,
    detail: str,
    pointer: str | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    err: dict[str, Any] = {
        "id": "5f3b0f3e-9a8e-4d27-8d3b-2f4ad1c0e6a1",
        "status": status,
        "code": code,
        "title": title,
        "detail": detail,
    }
    if pointer is not None:
        err["source"] = {"pointer": pointer}
    if meta is not None:
        err["meta"] = meta
    return {"errors": [err]}


_RL = {
    "Retry-After": "7",
    "RateLimit-Limit": "75",
    "RateLimit-Remaining": "0",
    "RateLimit-Reset": "7",
}

GET: list[Row] = [
    (
        "bad_key",
        401,
        _errors(
            401,
            "not_authenticated",
            "Authentication credentials were not provided.",
            "Missing or invalid private key.",
            "/data/",
        ),
        {},
        AUTH,
        None,
        "the private API key is missing or revoked",
    ),
    (
        "missing_scope",
        403,
        _errors(
            403,
            "permission_denied",
            "You do not have permission to perform this action.",
            "Your API key is missing required scopes: profiles:read",
        ),
        {},
        AUTH,
        None,
        "the key lacks the profiles:read scope",
    ),
    (
        "no_profile",
        404,
        _errors(404, "not_found", "Not found.", f"A profile with id {_PROFILE} does not exist."),
        {},
        NF,
        None,
        "no profile with that id",
    ),
    (
        "throttled",
        429,
        _errors(
            429,
            "throttled",
            "Request was throttled.",
            "Request was throttled. Expected available in 7 seconds.",
        ),
        _RL,
        RL,
        7.0,
        "the burst limit, the wait in Retry-After and in the detail",
    ),
    (
        "server_error",
        500,
        _errors(500, "error", "A server error occurred.", "A server error occurred."),
        {},
        NET,
        None,
        "Klaviyo failed",
    ),
]
http_cases(FAM, _get_profile, GET)

CREATE: list[Row] = [
    (
        "duplicate_profile",
        409,
        _errors(
            409,
            "duplicate_profile",
            "Conflict.",
            "A profile already exists with one of these identifiers.",
            "/data/attributes",
            {"duplicate_profile_id": "01GDDKASAP8TKDDA2GRZDSVP4I"},
        ),
        {},
        EXISTS,
        None,
        "a profile with that email already exists",
    ),
    (
        "invalid_email",
        400,
        _errors(
            400,
            "invalid",
            "Invalid input.",
            "Invalid email address",
            "/data/attributes/email",
        ),
        {},
        INT,
        None,
        "the email is malformed (the pack's input)",
    ),
]
http_cases(FAM, _create_profile, CREATE, transport=False)


def _cloudflare_timeout(ctx: Http) -> Any:
    ctx.http.set(
        524,
        "<!DOCTYPE html>\n<html><head><title>a.klaviyo.com | 524: A timeout occurred</title>"
        "</head><body><h1>A timeout occurred</h1><span>Error code 524</span></body></html>\n",
        {"Server": "cloudflare", "CF-RAY": "8c1f2b3a4d5e6f70-IAD"},
        "text/html; charset=UTF-8",
    )
    return _get_profile(ctx.http.url)


FAM.add(
    "cloudflare_524",
    TO | NET,
    "HTTP 524: Cloudflare reached Klaviyo's origin but it did not answer in time",
    _cloudflare_timeout,
)


def _unavailable(ctx: Http) -> Any:
    ctx.http.set(
        503,
        _errors(503, "error", "Service Unavailable", "Service temporarily unavailable."),
        {"Retry-After": "2"},
    )
    return _get_profile(ctx.http.url)


FAM.add(
    "unavailable",
    NET | RL,
    "HTTP 503 with Retry-After: Klaviyo is temporarily unavailable",
    _unavailable,
    retry_after=2.0,
)


def _garbage(ctx: Http) -> Any:
    return _get_profile(f"http://127.0.0.1:{ctx.net.garbage}")


FAM.add("garbage", NET, "the peer answers bytes that are not HTTP", _garbage)
