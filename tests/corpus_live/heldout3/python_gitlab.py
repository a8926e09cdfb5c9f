"""python-gitlab against a fake GitLab REST API v4 answering GitLab's documented error bodies
(``{"message": "404 Project Not Found"}``, validation messages, ``Retry later`` with
``Retry-After`` on 429). The library keeps the status as ``response_code``."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, EXISTS, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("python-gitlab", "fake GitLab REST API v4", http_setup, half="heldout3")


def _gl(url: str) -> Any:
    import gitlab

    return gitlab.Gitlab(url, private_token="glpat-PLANTED-token", timeout=1, api_version="4")


def _project(url: str) -> Any:
    return _gl(url).projects.get("group/app", obey_rate_limit=False, max_retries=0)


def _create_branch(url: str) -> Any:
    project = _gl(url).projects.get(7, lazy=True)
    return project.branches.create(
        {"branch": "main", "ref": "main"}, obey_rate_limit=False, max_retries=0
    )


def _create_project(url: str) -> Any:
    return _gl(url).projects.create({"name": "app"}, obey_rate_limit=False, max_retries=0)


GET: list[Row] = [
    (
        "project_not_found",
        404,
        {"message": "404 Project Not Found"},
        {},
        NF,
        None,
        "the project does not exist (or is hidden from this token)",
    ),
    (
        "unauthorized",
        401,
        {"message": "401 Unauthorized"},
        {},
        AUTH,
        None,
        "the token is wrong",
    ),
    (
        "token_revoked",
        401,
        {
            "error": "invalid_token",
            "error_description": "Token was revoked. You have to re-authenticate.",
        },
        {"WWW-Authenticate": 'Bearer realm="", error="invalid_token"'},
        AUTH,
        None,
        "the token was revoked",
    ),
    (
        "forbidden",
        403,
        {"message": "403 Forbidden"},
        {},
        AUTH,
        None,
        "the token may not read this project",
    ),
    (
        "rate_limited",
        429,
        "Retry later\n",
        {
            "Retry-After": "60",
            "RateLimit-Limit": "600",
            "RateLimit-Remaining": "0",
            "RateLimit-Name": "throttle_authenticated_api",
        },
        RL,
        None,
        "the authenticated API throttle (its Retry-After: 60 is not kept by the library's "
        "exception, which has the status and body only)",
    ),
    (
        "internal",
        500,
        {"message": "500 Internal Server Error"},
        {},
        NET,
        None,
        "GitLab failed",
    ),
    (
        "not_responding",
        502,
        "<!DOCTYPE html><html><head><title>We're sorry, but something went wrong (502)"
        "</title></head><body><h1>502</h1><h2>Whoops, GitLab is taking too much time to "
        "respond.</h2></body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the front proxy's page: GitLab is taking too much time to respond",
    ),
]
http_cases(FAM, _project, GET)
http_cases(
    FAM,
    _create_branch,
    [
        (
            "branch_exists",
            400,
            {"message": "Branch already exists"},
            {},
            EXISTS,
            None,
            "the branch to create already exists",
        ),
        (
            "ref_invalid",
            400,
            {"message": "Invalid reference name: main"},
            {},
            INT,
            None,
            "the ref to branch from is not valid (the pack's input)",
        ),
    ],
    transport=False,
)
http_cases(
    FAM,
    _create_project,
    [
        (
            "project_taken",
            400,
            {"message": {"name": ["has already been taken"], "path": ["has already been taken"]}},
            {},
            EXISTS,
            None,
            "a project of that name and path exists",
        ),
        (
            "too_large",
            413,
            {"message": "413 Request Entity Too Large"},
            {},
            INT,
            None,
            "the request is over the instance's limit, it never passes",
        ),
    ],
    transport=False,
)
