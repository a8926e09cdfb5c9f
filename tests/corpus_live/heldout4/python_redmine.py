"""python-redmine (``redminelib``) against a fake Redmine REST API: Redmine answers errors
with bare statuses (401, 403, 404, 412 for an unknown ``X-Redmine-Switch-User``, 413) and
422 with ``{"errors": [...]}`` (validation messages, among them *has already been taken*);
python-redmine turns each status into a class of its own and keeps no response."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    RL,
    UNRESOLVABLE,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("python-redmine", "fake Redmine REST API", http_setup, half="heldout4")


def _redmine(url: str, **kw: Any) -> Any:
    from redminelib import Redmine

    return Redmine(
        url, key="PLANTEDredmineapikey00000000000000000000", requests={"timeout": 1}, **kw
    )


def _issue(url: str) -> Any:
    return _redmine(url).issue.get(4242)


def _create_project(url: str) -> Any:
    return _redmine(url).project.create(name="Billing", identifier="billing")


def _as_user(url: str) -> Any:
    return _redmine(url, impersonate="departed.user").issue.get(4242)


GET: list[Row] = [
    (
        "unauthorized",
        401,
        "",
        {"WWW-Authenticate": 'Basic realm="Redmine API"'},
        AUTH,
        None,
        "the API key is invalid",
    ),
    ("forbidden", 403, "", {}, AUTH, None, "the user may not see the project"),
    ("no_issue", 404, "", {}, NF, None, "the issue does not exist"),
    (
        "rate_limited",
        429,
        "Rate limit exceeded",
        {"Retry-After": "20"},
        RL,
        None,
        "a proxy's rate limit (python-redmine keeps only the status: the delay is lost)",
    ),
    ("server_error", 500, "", {}, NET, None, "Redmine failed"),
    (
        "unavailable",
        503,
        "<html><body>Service Temporarily Unavailable</body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the front's maintenance page",
    ),
]
http_cases(FAM, _issue, GET, content_type="application/json; charset=utf-8", transport=False)
# python-redmine sets ``timeout`` as a Session attribute, which requests ignores: against a
# silent server it waits forever, so no silent case here.
FAM.add("refused", NET, "nothing listens", lambda c: _issue(f"http://{LOOPBACK}:{c.net.closed}"))
FAM.add("dns", NET, "host does not resolve", lambda c: _issue(f"http://{UNRESOLVABLE}"))
FAM.add("dropped", NET, "closed at once", lambda c: _issue(f"http://{LOOPBACK}:{c.net.close_now}"))
CREATE: list[Row] = [
    (
        "identifier_taken",
        422,
        {"errors": ["Identifier has already been taken"]},
        {},
        EXISTS,
        None,
        "a project with that identifier exists",
    ),
    (
        "name_blank",
        422,
        {"errors": ["Name cannot be blank", "Identifier is too long (maximum is 100 characters)"]},
        {},
        INT,
        None,
        "the pack's input does not validate",
    ),
    ("too_large", 413, "", {}, INT, None, "the request body is over the server's limit"),
    (
        "conflict",
        409,
        "",
        {},
        INT,
        None,
        "a stale update (Redmine's 409 is a lock-version conflict), not a duplicate",
    ),
]
http_cases(
    FAM, _create_project, CREATE, content_type="application/json; charset=utf-8", transport=False
)
http_cases(
    FAM,
    _as_user,
    [
        (
            "switch_user_unknown",
            412,
            "",
            {},
            AUTH | NF,
            None,
            "the user to impersonate does not exist or is locked",
        )
    ],
    transport=False,
)
