"""jira (the ``jira`` package for Jira's REST API v2) against a fake Jira Cloud answering its
documented error bodies (``{"errorMessages": [...], "errors": {...}}``), raised as
``JIRAError`` with the status and the response."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    RL,
    Http,
    Reply,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("jira", "fake Jira Cloud REST API v2", http_setup, half="heldout3")


def _jira(url: str) -> Any:
    from jira import JIRA

    return JIRA(
        server=url,
        basic_auth=("app@example.org", "PLANTED-atlassian-api-token"),
        max_retries=0,
        timeout=1,
        get_server_info=False,
        logging=False,
    )


def _issue(url: str) -> Any:
    return _jira(url).issue("APP-42")


def _create(url: str) -> Any:
    return _jira(url).create_issue(
        project="APP", summary="Printer on fire", issuetype={"name": "Bug"}
    )


def _project(url: str) -> Any:
    return _jira(url).project("APP")


def _m(*messages: str, **errors: str) -> dict[str, Any]:
    return {"errorMessages": list(messages), "errors": errors}


GET: list[Row] = [
    (
        "issue_not_found",
        404,
        _m("Issue does not exist or you do not have permission to see it."),
        {},
        NF,
        None,
        "the issue key does not exist (or is hidden)",
    ),
    (
        "bad_token",
        401,
        "Client must be authenticated to access this resource.",
        {"Content-Type": "text/plain;charset=UTF-8", "WWW-Authenticate": 'OAuth realm="x"'},
        AUTH,
        None,
        "the API token is wrong (a plain-text 401)",
    ),
    (
        "rate_limited",
        429,
        _m("Rate limit exceeded."),
        {
            "Retry-After": "30",
            "X-RateLimit-Limit": "100",
            "X-RateLimit-Remaining": "0",
            "RateLimit-Reason": "jira-burst-based",
        },
        RL,
        30.0,
        "the burst rate limit, with Retry-After",
    ),
    (
        "unavailable",
        503,
        "<html><body><h1>Service Unavailable</h1>Jira is temporarily unavailable.</body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "Jira is temporarily unavailable",
    ),
    (
        "internal",
        500,
        _m("Internal server error"),
        {},
        NET,
        None,
        "Jira failed",
    ),
]
http_cases(FAM, _issue, GET)
http_cases(
    FAM,
    _project,
    [
        (
            "project_not_found",
            404,
            _m("No project could be found with key 'APP'."),
            {},
            NF,
            None,
            "the project key names no project",
        )
    ],
    transport=False,
)
CREATE: list[Row] = [
    (
        "no_permission",
        403,
        _m("You do not have permission to create issues in this project."),
        {},
        AUTH,
        None,
        "the user may not create issues in APP",
    ),
    (
        "required_field",
        400,
        _m(customfield_10010="Team is required."),
        {},
        INT,
        None,
        "a required field is missing (the pack's input)",
    ),
    (
        "too_large",
        413,
        _m("The request entity is too large."),
        {},
        INT,
        None,
        "the request is over Jira's size limit, it never passes",
    ),
]


def _create_row(row: Row) -> None:
    id, status, body, headers, expect, ra, why = row

    def run(ctx: Http) -> Any:
        ctx.http.set(status, body, headers)

        def project(method: str, path: str, _body: bytes) -> Reply | None:
            if method == "GET" and path.startswith("/rest/api/2/project/"):
                return Reply(200, {"id": "10000", "key": "APP", "name": "App"})
            return None  # the POST of the issue gets the row's answer

        ctx.http.route = project
        return _create(ctx.http.url)

    FAM.add(id, expect, f"HTTP {status}: {why}", run, retry_after=ra)


for _row in CREATE:
    _create_row(_row)
