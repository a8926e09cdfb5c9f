"""launchdarkly-api (LaunchDarkly's generated REST API client, urllib3 and pydantic) against a
fake LaunchDarkly API on 127.0.0.1 (``Configuration(host=...)``): errors are LaunchDarkly's
documented ``{"code", "message", "id"}`` bodies (``unauthorized``, ``forbidden``,
``not_found``, ``invalid_request``, ``conflict``, ``rate_limited``). A 429 says how long to
wait the way LaunchDarkly does: global and route-level limits in ``X-Ratelimit-Reset``, the
epoch in MILLISECONDS when the window resets; access-token limits in
``X-Ratelimit-Auth-Token-Reset`` (also epoch milliseconds); IP-based limits in
``Retry-After`` (seconds). The client raises ``BadRequestException``,
``UnauthorizedException``, ``ForbiddenException``, ``NotFoundException``,
``ConflictException``, ``ServiceException`` (5xx) or a plain ``ApiException`` (429), each with
the status, the raw body and the headers; the transport raises urllib3's exceptions (the pack
turns urllib3's retries off: they would sleep out a ``Retry-After`` inside the handler)."""

from __future__ import annotations

import time
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

FAM = family("launchdarkly-api", "fake LaunchDarkly REST API", http_setup, half="heldout6")

_H = {"LD-API-Version": "20240415", "X-Request-Id": "7b0c2c4e-5f51-4d8e-9c62-0b8f6f7a9e21"}


def _configuration(url: str) -> Any:
    import launchdarkly_api

    return launchdarkly_api.Configuration(
        host=url,
        api_key={"ApiKey": "api-PLANTED0b8f6f7a-9e21-4d8e-9c62-000000000000"},
        retries=False,  # no urllib3 retry (it would sleep out a Retry-After in the handler)
    )


def _get_flag(url: str) -> Any:
    import launchdarkly_api
    from launchdarkly_api.api import feature_flags_api

    with launchdarkly_api.ApiClient(_configuration(url)) as api:
        flags = feature_flags_api.FeatureFlagsApi(api)
        return flags.get_feature_flag("checkout", "new-payment-flow", _request_timeout=1.0)


def _create_flag(url: str) -> Any:
    import launchdarkly_api
    from launchdarkly_api.api import feature_flags_api
    from launchdarkly_api.models.feature_flag_body import FeatureFlagBody

    with launchdarkly_api.ApiClient(_configuration(url)) as api:
        flags = feature_flags_api.FeatureFlagsApi(api)
        body = FeatureFlagBody(name="New payment flow", key="new-payment-flow")
        return flags.post_feature_flag("checkout", body, _request_timeout=1.0)


def _err(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message, "id": "30ce6058-87da-11e4-b116-123b93f75cba"}


_RL_BODY = _err("rate_limited", "You've exceeded the API rate limit. Try again later.")

GET: list[Row] = [
    (
        "bad_token",
        401,
        _err("unauthorized", "Invalid account ID header"),
        _H,
        AUTH,
        None,
        "the access token is unknown or revoked",
    ),
    (
        "forbidden",
        403,
        _err("forbidden", "Access to the requested resource was denied."),
        _H,
        AUTH,
        None,
        "the token's role does not allow reading this project",
    ),
    (
        "no_flag",
        404,
        _err("not_found", "Invalid resource identifier"),
        _H,
        NF,
        None,
        "no flag with that key in the project",
    ),
    (
        "ip_rate_limited",
        429,
        _RL_BODY,
        {**_H, "Retry-After": "7"},
        RL,
        7.0,
        "an IP-based rate limit, the wait in Retry-After (seconds)",
    ),
    (
        "server_error",
        500,
        _err("internal_server_error", "An internal server error occurred"),
        _H,
        NET,
        None,
        "LaunchDarkly failed",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad "
        "Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the load balancer found no healthy backend",
    ),
]
http_cases(FAM, _get_flag, GET)


def _reset_ms(seconds: float) -> str:
    return str(int((time.time() + seconds) * 1000))


def _global_limit(ctx: Http) -> Any:
    headers = {
        **_H,
        "X-Ratelimit-Global-Limit": "200",
        "X-Ratelimit-Global-Remaining": "0",
        "X-Ratelimit-Reset": _reset_ms(5),
    }
    ctx.http.set(429, _RL_BODY, headers)
    return _get_flag(ctx.http.url)


FAM.add(
    "global_rate_limited",
    RL,
    "HTTP 429: the account's global limit, the reset in X-Ratelimit-Reset (epoch milliseconds)",
    _global_limit,
    retry_after=5.0,
)


def _route_limit(ctx: Http) -> Any:
    headers = {
        **_H,
        "X-Ratelimit-Route-Limit": "10",
        "X-Ratelimit-Route-Remaining": "0",
        "X-Ratelimit-Reset": _reset_ms(3),
    }
    ctx.http.set(429, _RL_BODY, headers)
    return _create_flag(ctx.http.url)


FAM.add(
    "route_rate_limited",
    RL,
    "HTTP 429: the create-flag route's limit, the reset in X-Ratelimit-Reset (epoch ms)",
    _route_limit,
    retry_after=3.0,
)


def _token_limit(ctx: Http) -> Any:
    headers = {
        **_H,
        "X-Ratelimit-Auth-Token-Limit": "20",
        "X-Ratelimit-Auth-Token-Remaining": "0",
        "X-Ratelimit-Auth-Token-Reset": _reset_ms(6),
    }
    ctx.http.set(429, _RL_BODY, headers)
    return _get_flag(ctx.http.url)


FAM.add(
    "token_rate_limited",
    RL,
    "HTTP 429: the access token's own limit, the reset in X-Ratelimit-Auth-Token-Reset (epoch ms)",
    _token_limit,
    retry_after=6.0,
)


CREATE: list[Row] = [
    (
        "flag_exists",
        409,
        _err("conflict", "A feature with that key already exists"),
        _H,
        EXISTS,
        None,
        "a flag with that key already exists in the project",
    ),
    (
        "bad_variations",
        400,
        _err("invalid_request", "variations: must be unique"),
        _H,
        INT,
        None,
        "the flag body is invalid (the pack's input)",
    ),
]
http_cases(FAM, _create_flag, CREATE, transport=False)


def _gateway_timeout(ctx: Http) -> Any:
    ctx.http.set(
        504,
        "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n"
        "</body></html>\n",
        {},
        "text/html",
    )
    return _get_flag(ctx.http.url)


FAM.add("gateway_timeout", TO | NET, "HTTP 504: the gateway timed out", _gateway_timeout)
