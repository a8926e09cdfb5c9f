"""datadog-api-client (Datadog's generated Python client, urllib3) against a fake Datadog API
on 127.0.0.1 (``Configuration(host=...)``): errors are Datadog's ``{"errors": [...]}`` bodies
(403 ``Forbidden`` for a bad API or application key, 401 on v2, 404 ``Monitor not found``,
400, 429 with ``X-RateLimit-Limit``/``-Period``/``-Remaining``/``-Reset``/``-Name``,
where ``X-RateLimit-Reset`` is the seconds to wait, 5xx). The client raises
``UnauthorizedException``/``ForbiddenException``/``NotFoundException``/``ServiceException``
(5xx) or plain ``ApiException`` carrying the status, body and every header; its own retries
are off (the default); urllib3 itself retries a read that times out three times (so a
0.5 s timeout), and the transport raises urllib3's exceptions as they are."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("datadog-api-client", "fake Datadog API", http_setup, half="heldout5")


def _configuration(url: str) -> Any:
    from datadog_api_client import Configuration

    conf = Configuration(host=url, request_timeout=0.5)  # type: ignore[no-untyped-call]
    conf.api_key["apiKeyAuth"] = "PLANTEDddapikey000000000000000000"
    conf.api_key["appKeyAuth"] = "PLANTEDddappkey00000000000000000000000000"
    return conf


def _get_monitor(url: str) -> Any:
    from datadog_api_client import ApiClient
    from datadog_api_client.v1.api.monitors_api import MonitorsApi

    with ApiClient(_configuration(url)) as api:
        monitors = MonitorsApi(api)  # type: ignore[no-untyped-call]
        return monitors.get_monitor(monitor_id=91234567)


def _list_users(url: str) -> Any:
    from datadog_api_client import ApiClient
    from datadog_api_client.v2.api.users_api import UsersApi

    with ApiClient(_configuration(url)) as api:
        users = UsersApi(api)  # type: ignore[no-untyped-call]
        return users.list_users()


def _errors(*msgs: str) -> dict[str, list[str]]:
    return {"errors": list(msgs)}


_RL = {
    "X-RateLimit-Limit": "3000",
    "X-RateLimit-Period": "10",
    "X-RateLimit-Remaining": "0",
    "X-RateLimit-Reset": "4",
    "X-RateLimit-Name": "monitor_get",
}

MONITOR: list[Row] = [
    (
        "bad_api_key",
        403,
        _errors("Forbidden"),
        {},
        AUTH,
        None,
        "the API key or application key is invalid",
    ),
    ("no_monitor", 404, _errors("Monitor not found"), {}, NF, None, "no monitor with that id"),
    (
        "rate_limited",
        429,
        _errors("Too many requests"),
        _RL,
        RL,
        4.0,
        "the monitor_get rate limit, the wait in X-RateLimit-Reset",
    ),
    (
        "internal",
        500,
        _errors("Internal Server Error"),
        {},
        NET,
        None,
        "Datadog failed",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        "<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the edge proxy has no upstream",
    ),
    (
        "unavailable",
        503,
        _errors("Service Unavailable"),
        {},
        NET,
        None,
        "Datadog is unavailable",
    ),
]
http_cases(FAM, _get_monitor, MONITOR)
http_cases(
    FAM,
    _list_users,
    [
        (
            "unauthorized_v2",
            401,
            _errors("Unauthorized"),
            {},
            AUTH,
            None,
            "v2 answers a missing or wrong key with 401",
        ),
        (
            "no_permission",
            403,
            _errors("Forbidden", "Failed permission authorization checks"),
            {},
            AUTH,
            None,
            "the application key's role lacks user_access_read",
        ),
        (
            "bad_filter",
            400,
            _errors("Invalid filter[status] value: 'Enabled,Bogus'"),
            {},
            INT,
            None,
            "a malformed query parameter (the pack's input)",
        ),
    ],
    transport=False,
)
