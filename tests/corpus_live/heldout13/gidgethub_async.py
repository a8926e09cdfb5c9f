"""gidgethub (an async GitHub REST client, its ``gidgethub.httpx.GitHubAPI`` over an
``httpx.AsyncClient`` with a 1 s timeout) against a fake GitHub REST API on 127.0.0.1
(``base_url`` pointed at it). The fake answers GitHub's documented error bodies
(``{"message", "documentation_url", "status"}``, 422 adding ``errors``) with GitHub's
``x-ratelimit-*`` and ``x-github-request-id`` headers: the primary rate limit is a 403 with
``x-ratelimit-remaining: 0`` and the reset as epoch seconds, the secondary one a 403 or 429
with ``retry-after``. gidgethub raises ``BadRequest``, ``RateLimitExceeded``,
``InvalidField``, ``ValidationFailure``, ``GitHubBroken`` by status; httpx's own errors for
the transport. Faked: the API; real: gidgethub and httpx."""

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
    Row,
    family,
    http_cases,
    http_setup,
    run_async,
)

FAM = family("gidgethub", "fake GitHub REST API", http_setup, half="heldout13")

_DOCS = "https://docs.github.com/rest"


def _h(remaining: int = 4987, **extra: str) -> dict[str, str]:
    return {
        "x-github-api-version-selected": "2022-11-28",
        "x-ratelimit-limit": "5000",
        "x-ratelimit-remaining": str(remaining),
        "x-ratelimit-reset": str(int(time.time()) + 2400),
        "x-ratelimit-used": str(5000 - remaining),
        "x-ratelimit-resource": "core",
        "x-github-request-id": "C2F4:3B1D9:8E21A7:9047B2:6752E0A1",
        **extra,
    }


def _err(message: str, doc: str, status: int, **extra: Any) -> dict[str, Any]:
    return {"message": message, **extra, "documentation_url": doc, "status": str(status)}


async def _call(url: str, method: str, path: str, data: Any = None) -> Any:
    import httpx
    from gidgethub.httpx import GitHubAPI

    client: Any
    async with httpx.AsyncClient(timeout=1.0) as client:
        gh = GitHubAPI(
            client,
            "release-bot",
            oauth_token="ghp_PLANTED0aB1cD2eF3gH4iJ5kL6mN7oP8qR9",
            base_url=url,
        )
        if method == "GET":
            return await gh.getitem(path)
        if method == "PUT":
            return await gh.put(path, data=data)
        return await gh.post(path, data=data)


def _get_repo(url: str) -> Any:
    return run_async(_call(url, "GET", "/repos/octo-org/widgets"))


def _create_issue(url: str) -> Any:
    body = {"title": "Nightly build broken", "assignees": ["hubot"], "labels": ["ci"]}
    return run_async(_call(url, "POST", "/repos/octo-org/widgets/issues", body))


def _create_repo(url: str) -> Any:
    return run_async(_call(url, "POST", "/orgs/octo-org/repos", {"name": "widgets"}))


def _merge(url: str) -> Any:
    return run_async(
        _call(url, "PUT", "/repos/octo-org/widgets/pulls/42/merge", {"merge_method": "squash"})
    )


GET: list[Row] = [
    (
        "bad_credentials",
        401,
        _err("Bad credentials", _DOCS, 401),
        {"x-github-request-id": "C2F4:3B1D9:8E21A7:9047B2:6752E0A1"},
        AUTH,
        None,
        "the token is wrong, expired or revoked",
    ),
    (
        "repo_not_found",
        404,
        _err("Not Found", f"{_DOCS}/repos/repos#get-a-repository", 404),
        _h(),
        NF,
        None,
        "no such repository, or the token cannot see it",
    ),
    (
        "unicorn",
        502,
        _err("Server Error", _DOCS, 502),
        _h(),
        NET,
        None,
        "GitHub's backend failed to answer",
    ),
]
http_cases(FAM, _get_repo, GET)

ISSUE: list[Row] = [
    (
        "not_accessible",
        403,
        _err(
            "Resource not accessible by integration",
            f"{_DOCS}/issues/issues#create-an-issue",
            403,
        ),
        _h(),
        AUTH,
        None,
        "the app's installation lacks the issues:write permission",
    ),
    (
        "invalid_assignee",
        422,
        _err(
            "Validation Failed",
            f"{_DOCS}/issues/issues#create-an-issue",
            422,
            errors=[
                {"value": "hubot", "resource": "Issue", "field": "assignees", "code": "invalid"}
            ],
        ),
        _h(),
        INT,
        None,
        "the caller named an assignee who cannot be assigned",
    ),
    (
        "issues_disabled",
        410,
        _err("Issues are disabled for this repo", f"{_DOCS}/issues/issues#create-an-issue", 410),
        _h(),
        NF,
        None,
        "the repository has its issues turned off",
    ),
    (
        "secondary_limit",
        403,
        _err(
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try"
            " again. If you reach out to GitHub Support for help, please include the request ID"
            " C2F4:3B1D9:8E21A7:9047B2:6752E0A1.",
            "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
            403,
        ),
        _h(4930, **{"retry-after": "60"}),
        RL,
        60.0,
        "content-creation too fast: GitHub's secondary limit, with its delay",
    ),
]
http_cases(FAM, _create_issue, ISSUE, transport=False)

REPO: list[Row] = [
    (
        "repo_exists",
        422,
        _err(
            "Repository creation failed.",
            f"{_DOCS}/repos/repos#create-an-organization-repository",
            422,
            errors=[
                {
                    "resource": "Repository",
                    "code": "custom",
                    "field": "name",
                    "message": "name already exists on this account",
                }
            ],
        ),
        _h(),
        EXISTS,
        None,
        "the organization has a repository of this name already",
    ),
]
http_cases(FAM, _create_repo, REPO, transport=False)

MERGE: list[Row] = [
    (
        "head_modified",
        409,
        _err(
            "Head branch was modified. Review and try the merge again.",
            f"{_DOCS}/pulls/pulls#merge-a-pull-request",
            409,
        ),
        _h(),
        INT,
        None,
        "the pull request's head moved while it was being merged",
    ),
]
http_cases(FAM, _merge, MERGE, transport=False)


@FAM.case(
    "primary_limit",
    RL,
    "HTTP 403: the token's hourly request budget is spent, the reset as epoch seconds",
    retry_after=2400.0,
)
def _primary_limit(ctx: Http) -> Any:
    body = _err(
        "API rate limit exceeded for user ID 583231. If you reach out to GitHub Support for help,"
        " please include the request ID C2F4:3B1D9:8E21A7:9047B2:6752E0A1 and timestamp"
        " 2026-11-29 21:40:07 UTC.",
        "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
        403,
    )
    ctx.http.set(403, body, _h(0))
    return _get_repo(ctx.http.url)


FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: _get_repo(f"http://127.0.0.1:{c.net.garbage}"),
)
