"""huggingface_hub's ``HfApi`` against a fake Hugging Face Hub API answering its documented
errors: ``X-Error-Code`` (``RepoNotFound``, ``RevisionNotFound``, ``GatedRepo``) and
``X-Error-Message`` headers next to a JSON ``{"error": ...}`` body."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, EXISTS, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("huggingface_hub", "fake Hugging Face Hub API", http_setup, half="heldout3")


def _api(url: str) -> Any:
    from huggingface_hub import HfApi

    return HfApi(endpoint=url, token="hf_PLANTEDhuggingfacetoken0000000000")


def _info(url: str) -> Any:
    return _api(url).model_info("acme/sentiment-small", revision="v2", timeout=1)


def _create(url: str) -> Any:
    return _api(url).create_repo("acme/sentiment-small", exist_ok=False)


def _err(message: str, code: str | None = None) -> dict[str, str]:
    headers = {"X-Error-Message": message, "X-Request-Id": "Root=1-6750a1b2-0f3c"}
    if code:
        headers["X-Error-Code"] = code
    return headers


INFO: list[Row] = [
    (
        "repo_not_found",
        401,
        {"error": "Repository Not Found for url: /api/models/acme/sentiment-small/revision/v2."},
        _err(
            "Repository not found",
            "RepoNotFound",
        ),
        NF,
        None,
        "the Hub answers 401 + RepoNotFound for a repo that does not exist or is private",
    ),
    (
        "revision_not_found",
        404,
        {"error": "Invalid rev id: v2"},
        _err("Invalid rev id: v2", "RevisionNotFound"),
        NF,
        None,
        "the revision (branch, tag) does not exist",
    ),
    (
        "gated",
        403,
        {
            "error": "Access to model acme/sentiment-small is restricted and you are not in the "
            "authorized list. Visit https://huggingface.co/acme/sentiment-small to ask for access."
        },
        _err(
            "Access to model acme/sentiment-small is restricted and you are not in the authorized "
            "list.",
            "GatedRepo",
        ),
        AUTH,
        None,
        "a gated repo this account was not granted",
    ),
    (
        "bad_token",
        401,
        {"error": "Invalid credentials in Authorization header"},
        _err("Invalid credentials in Authorization header"),
        AUTH,
        None,
        "the token is invalid",
    ),
    (
        "rate_limited",
        429,
        {
            "error": "You have exceeded our hourly quotas for action 'api'. We invite you to "
            "retry later."
        },
        {
            "RateLimit": '"api";r=0;t=120',
            "RateLimit-Policy": '"fixed window";"api";q=1000;w=300',
        },
        RL,
        120.0,
        "the account's API rate limit: the IETF RateLimit header says t=120 (seconds to reset)",
    ),
    (
        "internal",
        500,
        {"error": "Internal Error - We're working hard to fix this as soon as possible!"},
        {},
        NET,
        None,
        "the Hub failed",
    ),
    (
        "unavailable",
        503,
        "<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the Hub is unavailable (an HTML page)",
    ),
]
http_cases(FAM, _info, INFO)
http_cases(
    FAM,
    _create,
    [
        (
            "repo_exists",
            409,
            {"error": "You already created this model repo", "url": "https://hf.co/acme/x"},
            _err("You already created this model repo"),
            EXISTS,
            None,
            "the repository to create exists",
        ),
        (
            "bad_name",
            400,
            {
                "error": "Repo id must use alphanumeric chars or '-', '_', '.', '--' and '..' are "
                "forbidden, '-' and '.' cannot start or end the name, max length is 96"
            },
            _err("Invalid repo name"),
            INT,
            None,
            "the repository name is invalid (the pack's input)",
        ),
        (
            "no_write",
            403,
            {"error": 'You don\'t have the rights to create a model under the namespace "acme"'},
            _err('You don\'t have the rights to create a model under the namespace "acme"'),
            AUTH,
            None,
            "the token may not create repos in that organization",
        ),
    ],
    transport=False,
)
