"""github3.py (a GitHub REST client on requests) through ``GitHubEnterprise`` against a fake
GitHub Enterprise Server REST API (``/api/v3``) on 127.0.0.1 answering GitHub's error bodies
(``{"message", "documentation_url", "status"}``, ``errors[]`` on 422) with its statuses and
headers: bad credentials, a required one-time password, a token without the permission
(``X-Accepted-GitHub-Permissions``), the primary rate limit (``x-ratelimit-reset`` as an
epoch) and the secondary one (``Retry-After``), a repository name already taken, an invalid
request, a missing repository, a DMCA block, server errors and the
load balancer's HTML page; plus the session's own read timeout and the transport failures."""

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
    Http,
    family,
    http_setup,
    transport_cases,
)

FAM = family("github3.py", "fake GitHub Enterprise Server REST API", http_setup, half="heldout18")

_DOCS = "https://docs.github.com/enterprise-server@3.14/rest"
_CREATE_DOCS = f"{_DOCS}/repos/repos#create-a-repository-for-the-authenticated-user"
_H = {
    "X-GitHub-Media-Type": "github.v3; format=json",
    "X-GitHub-Request-Id": "C3A1:1F2B:9E8D7:A1B2C3:674A1F00",
    "X-GitHub-Enterprise-Version": "3.14.4",
}


def _client(url: str) -> Any:
    import github3  # type: ignore[import-untyped]

    gh = github3.GitHubEnterprise(url, token="ghp_PLANTEDenterpriseToken0123456789ab")
    gh.session.default_connect_timeout = 1
    gh.session.default_read_timeout = 1
    return gh


def _create(url: str) -> Any:
    return _client(url).create_repository("billing-service", private=True)


def _get(url: str) -> Any:
    return _client(url).repository("platform", "billing-service")


def _err(message: str, status: int, docs: str = _DOCS, **extra: Any) -> dict[str, Any]:
    return {"message": message, **extra, "documentation_url": docs, "status": str(status)}


def _row(
    id: str,
    status: int,
    body: Any,
    headers: dict[str, str],
    expect: frozenset[str],
    why: str,
    call: Any = _create,
    retry_after: float | None = None,
    content_type: str = "application/json; charset=utf-8",
) -> None:
    def run(ctx: Http) -> Any:
        ctx.http.set(status, body, {**_H, **headers}, content_type)
        return call(ctx.http.url)

    FAM.add(id, expect, f"HTTP {status}: {why}", run, retry_after=retry_after)


_row(
    "bad_credentials",
    401,
    _err("Bad credentials", 401),
    {},
    AUTH,
    "the token is wrong or revoked",
)
_row(
    "otp_required",
    401,
    _err(
        "Must specify two-factor authentication OTP code.",
        401,
        f"{_DOCS}/overview/other-authentication-methods#working-with-two-factor-authentication",
    ),
    {"X-GitHub-OTP": "required; app"},
    AUTH,
    "the account needs a one-time password the client did not send",
)
_row(
    "token_lacks_permission",
    403,
    _err("Resource not accessible by personal access token", 403, _CREATE_DOCS),
    {"X-Accepted-GitHub-Permissions": "administration=write"},
    AUTH,
    "the fine-grained token lacks the administration permission",
)


def _primary_limit(ctx: Http) -> Any:
    reset = int(time.time() + 20)
    ctx.http.set(
        403,
        _err(
            "API rate limit exceeded for user ID 4127. If you reach out to GitHub Support for "
            "help, please include the request ID C3A1:1F2B:9E8D7:A1B2C3:674A1F00.",
            403,
            f"{_DOCS}/overview/rate-limits-for-the-rest-api",
        ),
        {
            **_H,
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-used": "5000",
            "x-ratelimit-reset": str(reset),
            "x-ratelimit-resource": "core",
        },
        "application/json; charset=utf-8",
    )
    return _create(ctx.http.url)


FAM.add(
    "primary_rate_limit",
    RL,
    "HTTP 403: the hourly primary rate limit is spent, the reset as an epoch",
    _primary_limit,
    retry_after=20.0,
)
_row(
    "secondary_rate_limit",
    403,
    _err(
        "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
        "again. If you reach out to GitHub Support for help, please include the request ID "
        "C3A1:1F2B:9E8D7:A1B2C3:674A1F00.",
        403,
        f"{_DOCS}/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
    ),
    {"Retry-After": "60"},
    RL,
    "too many content-creating requests at once (a secondary limit)",
    retry_after=60.0,
)
_row(
    "name_taken",
    422,
    _err(
        "Repository creation failed.",
        422,
        _CREATE_DOCS,
        errors=[
            {
                "resource": "Repository",
                "code": "custom",
                "field": "name",
                "message": "name already exists on this account",
            }
        ],
    ),
    {},
    EXISTS,
    "a repository of that name already exists",
)
_row(
    "invalid_request",
    422,
    _err(
        "Invalid request.\n\nFor 'properties/private', \"yes\" is not a boolean.",
        422,
        _CREATE_DOCS,
    ),
    {},
    INT,
    "a field of the wrong type (the caller's input)",
)
_row(
    "repo_missing",
    404,
    _err("Not Found", 404, f"{_DOCS}/repos/repos#get-a-repository"),
    {},
    NF,
    "the repository does not exist (or is hidden from the token)",
    call=_get,
)
_row(
    "dmca_blocked",
    451,
    {
        "message": "Repository access blocked",
        "block": {
            "reason": "dmca",
            "created_at": "2026-03-02T17:41:09Z",
            "html_url": "https://github.com/github/dmca/blob/master/2026/03/2026-03-02-acme.md",
        },
    },
    {},
    AUTH | NF,
    "the repository is blocked for legal reasons",
    call=_get,
)
_row(
    "server_error",
    500,
    _err("Server Error", 500),
    {},
    NET,
    "the API failed",
)
_row(
    "unicorn",
    503,
    "<!DOCTYPE html>\n<html>\n<head><title>Unicorn! &middot; GitHub</title></head>\n<body>\n"
    "<p><strong>No server is currently available to service your request.</strong></p>\n"
    "<p>Sorry about that. Please try refreshing and contact us if the problem persists.</p>\n"
    "</body>\n</html>\n",
    {},
    NET,
    "the load balancer has no backend (its HTML page)",
    content_type="text/html; charset=utf-8",
)
transport_cases(FAM, lambda host, port: _create(f"http://{host}:{port}"), dns_port=80)
