"""zabbix-utils (Zabbix's official Python library, its synchronous ``ZabbixAPI`` over
urllib) against a fake Zabbix 7.0 frontend on 127.0.0.1 speaking JSON-RPC 2.0 at
``/api_jsonrpc.php``: ``apiinfo.version`` answers ``7.0.5``, ``user.login`` a session id, and
each case's call gets a Zabbix error object (``{"code", "message", "data"}``, HTTP 200, the
frontend's texts for a wrong password, a terminated session, an expired API token, missing
permissions, an existing host, invalid parameters, an unknown method), a PHP fatal error
page, a proxy's 502, an unsupported old server; plus the library's timeout and the transport
failures. The library wraps every connection error in ``ProcessingError`` (``from None``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    Family,
    Http,
    Reply,
    family,
    http_setup,
    transport_cases,
)

FAM: Family = family("zabbix-utils", "fake Zabbix 7.0 JSON-RPC API", http_setup, half="heldout17")

_SESSION = "PLANTEDzabbixsession0f3c5e2a9b7d41c8"


def _ok(result: Any, rid: Any) -> Reply:
    return Reply(200, {"jsonrpc": "2.0", "result": result, "id": rid})


def _route(
    version: str, login: Reply | None, answer: Reply
) -> Callable[[str, str, bytes], Reply | None]:
    def route(method: str, path: str, body: bytes) -> Reply | None:
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            return answer
        rid = req.get("id")
        if req.get("method") == "apiinfo.version":
            return _ok(version, rid)
        if req.get("method") == "user.login":
            return login or _ok(_SESSION, rid)
        if isinstance(answer.body, dict) and "error" in answer.body:
            return Reply(answer.status, dict(answer.body, id=rid), answer.headers)
        return answer

    return route


def _client(url: str) -> Any:
    from zabbix_utils import ZabbixAPI  # type: ignore[import-untyped]

    return ZabbixAPI(
        url=f"{url}/api_jsonrpc.php", user="automation", password="PLANTEDzbxpass", timeout=1
    )


def _create_host(url: str) -> Any:
    api = _client(url)
    return api.host.create(
        host="web-01",
        groups=[{"groupid": "2"}],
        interfaces=[
            {"type": 1, "main": 1, "useip": 1, "ip": "10.0.0.5", "dns": "", "port": "10050"}
        ],
    )


def _err(code: int, message: str, data: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": {"code": code, "message": message, "data": data}}


def _case(
    id: str,
    expect: frozenset[str],
    reason: str,
    answer: Reply,
    *,
    login: Reply | None = None,
    version: str = "7.0.5",
    call: Callable[[str], Any] = _create_host,
) -> None:
    def run(ctx: Http) -> Any:
        ctx.http.route = _route(version, login, answer)
        return call(ctx.http.url)

    FAM.add(id, expect, reason, run)


_OK_BODY = Reply(200, {"jsonrpc": "2.0", "result": {"hostids": ["10643"]}, "id": "x"})

_case(
    "wrong_password",
    AUTH,
    "user.login: the password is wrong (or the account is blocked for a while)",
    _OK_BODY,
    login=Reply(
        200,
        _err(
            -32602,
            "Invalid params.",
            "Incorrect user name or password or account is temporarily blocked.",
        ),
    ),
)
_case(
    "session_terminated",
    AUTH,
    "the session was ended (logged out elsewhere, or expired)",
    Reply(200, _err(-32602, "Invalid params.", "Session terminated, re-login, please.")),
)
_case(
    "token_expired",
    AUTH,
    "the API token has expired",
    Reply(200, _err(-32602, "Invalid params.", "API token expired.")),
)
_case(
    "no_permission_to_call",
    AUTH,
    "the user's role may not call host.create",
    Reply(200, _err(-32500, "Application error.", 'No permissions to call "host.create".')),
)
_case(
    "no_permission_object",
    AUTH | NF,
    "the host group does not exist or the user may not see it",
    Reply(
        200,
        _err(
            -32500, "Application error.", "No permissions to referred object or it does not exist!"
        ),
    ),
)
_case(
    "host_exists",
    EXISTS,
    "a host of that name already exists",
    Reply(200, _err(-32602, "Invalid params.", 'Host with the same name "web-01" already exists.')),
)
_case(
    "invalid_parameter",
    INT,
    "the interface's port is not an integer (the caller's input)",
    Reply(
        200,
        _err(
            -32602,
            "Invalid params.",
            'Invalid parameter "/1/interfaces/1/port": an integer is expected.',
        ),
    ),
)


def _bad_method(url: str) -> Any:
    return _client(url).hosts.get(output=["hostid"])


_case(
    "unknown_method",
    INT,
    "the method name is misspelt (the caller's input)",
    Reply(200, _err(-32601, "Method not found.", 'Incorrect API "hosts".')),
    call=_bad_method,
)
_case(
    "php_memory_exhausted",
    NET | INT,
    "the frontend's PHP ran out of memory answering (an HTML page, HTTP 500)",
    Reply(
        500,
        "<br />\n<b>Fatal error</b>:  Allowed memory size of 134217728 bytes exhausted "
        "(tried to allocate 20480 bytes) in <b>/usr/share/zabbix/include/classes/api/"
        "CApiService.php</b> on line <b>1146</b><br />\n",
        content_type="text/html; charset=UTF-8",
    ),
)
_case(
    "bad_gateway",
    NET,
    "nginx could not reach php-fpm (HTTP 502 page)",
    Reply(
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
        "</body>\r\n</html>\r\n",
        content_type="text/html",
    ),
)
_case(
    "unsupported_server",
    INT,
    "the server is Zabbix 5.0, older than the library supports",
    _OK_BODY,
    version="5.0.42",
)
transport_cases(FAM, lambda host, port: _client(f"http://{host}:{port}"), dns_port=80)
