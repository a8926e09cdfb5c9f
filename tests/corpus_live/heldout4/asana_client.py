"""asana (Asana's OpenAPI-generated Python client, v5) against a fake Asana API answering its
documented error bodies (``{"errors": [{"message", "help", "phrase"}]}``): 400, 401, 402
(a premium feature on a free workspace), 403, 404, 424 (a dependency that failed), 429 with
``Retry-After``, 500 with the ``phrase`` Asana asks to quote to support."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("asana", "fake Asana API", http_setup, half="heldout4")


def _api(url: str) -> Any:
    import asana
    from urllib3.util.retry import Retry

    config = asana.Configuration()
    config.host = url + "/api/1.0"
    config.access_token = "2/PLANTED/asana-personal-access-token"
    config.retry_strategy = Retry(total=0, connect=0, read=0, status=0, redirect=0)
    client = asana.ApiClient(config)
    return asana.TasksApi(client)


def _get(url: str) -> Any:
    return _api(url).get_task("1204567890123456", {}, _request_timeout=1)


def _create(url: str) -> Any:
    return _api(url).create_task(
        {"data": {"name": "Ship it", "workspace": "1200000000000001"}}, {}, _request_timeout=1
    )


def _e(message: str, phrase: str | None = None) -> dict[str, Any]:
    err: dict[str, Any] = {
        "message": message,
        "help": "For more information on API status codes and how to handle them, read the "
        "docs on errors: https://developers.asana.com/docs/errors",
    }
    if phrase:
        err["phrase"] = phrase
    return {"errors": [err]}


GET: list[Row] = [
    ("not_authorized", 401, _e("Not Authorized"), {}, AUTH, None, "the token is invalid"),
    (
        "forbidden",
        403,
        _e("You don't have access to this task."),
        {},
        AUTH,
        None,
        "the user may not read the task",
    ),
    (
        "unknown_task",
        404,
        _e("task: Unknown object: 1204567890123456"),
        {},
        NF,
        None,
        "the task does not exist",
    ),
    (
        "rate_limited",
        429,
        _e("You have made too many requests recently. Please, be chill."),
        {"Retry-After": "30"},
        RL,
        30.0,
        "Asana's rate limit, with the server's delay",
    ),
    (
        "server_error",
        500,
        _e(
            "Server Error",
            "6 sad squid snuggle softly",
        ),
        {},
        NET,
        None,
        "Asana failed (the phrase identifies the incident)",
    ),
    (
        "unavailable",
        503,
        _e("Service Unavailable"),
        {},
        NET,
        None,
        "Asana is unavailable",
    ),
]
http_cases(FAM, _get, GET)
CREATE: list[Row] = [
    (
        "missing_field",
        400,
        _e("workspace: Missing input"),
        {},
        INT,
        None,
        "a required field is missing (the pack's input)",
    ),
    (
        "premium_only",
        402,
        _e("This feature is only available to premium users. Upgrade your workspace to use it."),
        {},
        INT | AUTH,
        None,
        "a premium feature on a free workspace: the account, not a quota that refills",
    ),
    (
        "workspace_unknown",
        404,
        _e("workspace: Not a recognized ID: 1200000000000001"),
        {},
        NF,
        None,
        "the workspace named does not exist",
    ),
]
http_cases(FAM, _create, CREATE, transport=False)
