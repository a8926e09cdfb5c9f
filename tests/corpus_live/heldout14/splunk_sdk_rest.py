"""splunk-sdk (``splunklib.client``, Splunk's Python SDK over the standard library's
``http.client``) against a fake Splunk Enterprise management REST API (splunkd's
``/services``) on 127.0.0.1: the ``Service`` is given a session token (so no login round
trip) and the SDK's own handler with a 1 s timeout. splunkd answers errors with its XML
``<response><messages><msg type="...">`` bodies (``call not properly authenticated``, a
missing capability, ``Could not find object``, ``An object with name=... already exists``,
a search that will not parse, the search concurrency and disk quotas on 503). The SDK raises
``HTTPError`` carrying the first ``msg``, ``KeyError`` for an entity a collection does not
hold, and lets socket and ``http.client`` errors through for the transport. Faked: splunkd's
REST API; real: the SDK."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("splunk-sdk", "fake Splunk REST API (splunkd)", http_setup, half="heldout14")

#: splunkd closes the connection after each answer, as the SDK's ``Connection: Close`` asks
_H = {
    "Server": "Splunkd",
    "Connection": "Close",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "SAMEORIGIN",
}


def _service(url: str) -> Any:
    from splunklib import binding, client  # type: ignore[import-untyped]

    host, _, port = url.removeprefix("http://").rpartition(":")
    return client.Service(
        handler=binding.handler(timeout=1),
        host=host,
        port=int(port),
        scheme="http",
        token="Splunk PLANTED^sessionKey^Vq3xT8mR2wL6yN1p",
        owner="nobody",
        app="search",
    )


def _search(url: str) -> Any:
    return _service(url).jobs.create(
        "search index=app_logs level=ERROR | head 20", exec_mode="blocking"
    )


def _index(url: str) -> Any:
    return _service(url).indexes["app_logs"]


def _create_index(url: str, **settings: Any) -> Any:
    return _service(url).indexes.create("app_logs", **settings)


def _msg(type: str, text: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<response>\n  <messages>\n'
        f'    <msg type="{type}">{text}</msg>\n  </messages>\n</response>\n'
    )


SEARCH: list[Row] = [
    (
        "not_authenticated",
        401,
        _msg("WARN", "call not properly authenticated"),
        _H,
        AUTH,
        None,
        "the session token expired or was never valid",
    ),
    (
        "bad_search",
        400,
        _msg(
            "FATAL",
            "Error in 'search' command: Unable to parse the search: Comparator '=' has an"
            " invalid term on the left hand side: level=ERROR |.",
        ),
        _H,
        INT,
        None,
        "the caller's search string does not parse",
    ),
    (
        "concurrency",
        503,
        _msg(
            "ERROR",
            "Search not executed: The maximum number of concurrent historical searches on"
            " this instance has been reached., concurrency_category=&quot;historical&quot;,"
            " concurrency_context=&quot;instance-wide&quot;, current_concurrency=6,"
            " concurrency_limit=6",
        ),
        _H,
        RL,
        None,
        "every historical search slot is busy, no delay given",
    ),
    (
        "disk_quota",
        503,
        _msg(
            "ERROR",
            "Search not executed: The maximum disk usage quota for this user has been"
            " reached. Use the Job Manager to delete some of your search results.,"
            " usage=10240MB, quota=10000MB, user=svc_agent, concurrency_category=&quot;"
            "historical&quot;, concurrency_context=&quot;user_instance-wide&quot;",
        ),
        _H,
        QUOTA,
        None,
        "the user's search-results disk quota is used up",
    ),
    (
        "server_error",
        500,
        _msg("ERROR", "Internal Server Error"),
        _H,
        NET,
        None,
        "splunkd failed while dispatching the search",
    ),
]
http_cases(FAM, _search, SEARCH, content_type="text/xml; charset=UTF-8")

INDEX: list[Row] = [
    (
        "index_missing",
        404,
        _msg("ERROR", "Could not find object id=app_logs"),
        _H,
        NF | INT,
        None,
        "the instance has no index of that name",
    ),
    (
        "index_no_capability",
        403,
        _msg(
            "ERROR",
            "You (user=svc_agent) do not have permission to perform this operation"
            " (requires capability: indexes_edit).",
        ),
        _H,
        AUTH,
        None,
        "the user's role lacks the capability to read index settings",
    ),
]
http_cases(FAM, _index, INDEX, content_type="text/xml; charset=UTF-8", transport=False)

CREATE: list[Row] = [
    (
        "index_exists",
        409,
        _msg("ERROR", "An object with name=app_logs already exists"),
        _H,
        EXISTS,
        None,
        "an index of that name exists already",
    ),
    (
        "create_forbidden",
        403,
        _msg(
            "ERROR",
            "You (user=svc_agent) do not have permission to perform this operation"
            " (requires capability: indexes_edit).",
        ),
        _H,
        AUTH,
        None,
        "the user's role lacks the capability to create indexes",
    ),
]
http_cases(FAM, _create_index, CREATE, content_type="text/xml; charset=UTF-8", transport=False)

BAD: list[Row] = [
    (
        "bad_argument",
        400,
        _msg(
            "ERROR",
            "In handler 'indexes': Argument \"frozenTimePeriodInSecs\" has an invalid value: -1",
        ),
        _H,
        INT,
        None,
        "the caller's index setting is out of range",
    ),
]
http_cases(
    FAM,
    lambda url: _create_index(url, frozenTimePeriodInSecs=-1),
    BAD,
    content_type="text/xml; charset=UTF-8",
    transport=False,
)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: _search(f"http://127.0.0.1:{c.net.garbage}"),
)
