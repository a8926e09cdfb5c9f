"""PyGithub against a fake GitHub REST API answering its documented error bodies."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, EXISTS, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family("pygithub", "fake GitHub REST API v3", http_setup, half="heldout")


def _call(url: str) -> Any:
    import github

    g = github.Github(base_url=url, auth=github.Auth.Token("ghp_PLANTED"), retry=None, timeout=1)
    return g.get_repo("octo/widgets")


DOC = "https://docs.github.com/rest"
ROWS: list[Row] = [
    (
        "bad_credentials",
        401,
        {"message": "Bad credentials", "documentation_url": DOC, "status": "401"},
        {},
        AUTH,
        None,
        "token rejected",
    ),
    (
        "not_found",
        404,
        {"message": "Not Found", "documentation_url": DOC, "status": "404"},
        {},
        NF,
        None,
        "no such repository",
    ),
    (
        "primary_rate",
        403,
        {"message": "API rate limit exceeded for user ID 1.", "documentation_url": DOC},
        {"x-ratelimit-remaining": "0", "x-ratelimit-limit": "5000", "retry-after": "60"},
        RL,
        60.0,
        "primary rate limit (403) with retry-after",
    ),
    (
        "secondary_rate",
        403,
        {
            "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
            "documentation_url": DOC,
        },
        {"retry-after": "45"},
        RL,
        45.0,
        "secondary rate limit",
    ),
    (
        "rate_429",
        429,
        {"message": "API rate limit exceeded", "documentation_url": DOC},
        {"retry-after": "20"},
        RL,
        20.0,
        "429 rate limit",
    ),
    (
        "sso_required",
        403,
        {
            "message": "Resource protected by organization SAML enforcement. You must grant your Personal Access token access to this organization.",
            "documentation_url": DOC,
        },
        {},
        AUTH,
        None,
        "SAML SSO: the token is not authorized",
    ),
    (
        "forbidden_scope",
        403,
        {"message": "Resource not accessible by personal access token", "documentation_url": DOC},
        {},
        AUTH,
        None,
        "token lacks permission",
    ),
    (
        "blocked",
        451,
        {"message": "Repository access blocked", "block": {"reason": "tos"}},
        {},
        INT | NF | AUTH,
        None,
        "unavailable for legal reasons",
    ),
    (
        "gone",
        410,
        {"message": "Issues are disabled for this repo", "documentation_url": DOC},
        {},
        NF,
        None,
        "gone",
    ),
    (
        "validation",
        422,
        {
            "message": "Validation Failed",
            "errors": [
                {
                    "resource": "Repository",
                    "code": "custom",
                    "field": "name",
                    "message": "name already exists on this account",
                }
            ],
            "documentation_url": DOC,
        },
        {},
        EXISTS | INT,
        None,
        "name already exists",
    ),
    (
        "conflict",
        409,
        {"message": "Git Repository is empty.", "documentation_url": DOC},
        {},
        INT,
        None,
        "409 empty repository: not a duplicate",
    ),
    ("server", 500, {"message": "Server Error"}, {}, NET, None, "server error"),
    ("unicorn", 502, "<html>Unicorn! Server Error</html>", {}, NET, None, "bad gateway"),
    ("unavailable", 503, {"message": "Service Unavailable"}, {}, NET, None, "unavailable"),
    ("gw_timeout", 504, "", {}, TO, None, "gateway timeout"),
]
http_cases(FAM, _call, ROWS)
