"""grafana-client (a client for Grafana's HTTP API, over niquests) through its async
``AsyncGrafanaApi`` against a fake Grafana on 127.0.0.1 (host and port, a service-account
token, a 1 s timeout). Errors are Grafana's ``{"message", "messageId", "statusCode",
"traceID"}`` bodies (``{"accessErrorId", "message", "title"}`` for a missing permission);
a proxy in front answers HTML. The client raises ``GrafanaBadInputError`` (400),
``GrafanaUnauthorizedError`` (401, the body kept on ``.response``), ``GrafanaClientError``
(other 4xx), ``GrafanaServerError`` (5xx), ``GrafanaTimeoutError`` and ``GrafanaException``
(status 0) wrapping niquests' exceptions from the transport."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    Http,
    family,
    http_setup,
    run_async,
    transport_cases,
)

FAM = family("grafana-client", "fake Grafana HTTP API (async client)", http_setup, half="heldout9")

_TOKEN = "glsa_PLANTEDq8Zr3Kx7Vn2Lm5Pw9Ty4Hb6Jd1Fs0_4e1c9a7b"
_DASH = "cIBgcSjkk"


def _api(host: str, port: int) -> Any:
    from grafana_client.api import AsyncGrafanaApi

    return AsyncGrafanaApi(auth=_TOKEN, host=host, port=port, timeout=1.0)


async def _dashboard(host: str, port: int) -> Any:
    return await _api(host, port).dashboard.get_dashboard(_DASH)


async def _folder(host: str, port: int, title: str = "Payments") -> Any:
    return await _api(host, port).folder.create_folder(title, uid="payments")


def _at(ctx: Http) -> tuple[str, int]:
    return "127.0.0.1", ctx.http.port


def _err(status: int, message: str, message_id: str) -> dict[str, Any]:
    return {"message": message, "messageId": message_id, "statusCode": status, "traceID": ""}


_GET = [
    (
        "invalid_token",
        401,
        _err(401, "Invalid API key", "api-key.invalid"),
        AUTH,
        "the service-account token is unknown or revoked",
    ),
    (
        "expired_token",
        401,
        _err(401, "Expired API key", "api-key.expired"),
        AUTH,
        "the service-account token expired",
    ),
    (
        "access_denied",
        403,
        {
            "accessErrorId": "ACE4810262347",
            "message": "You'll need additional permissions to perform this action. Permissions "
            "needed: dashboards:read",
            "title": "Access denied",
        },
        AUTH,
        "the service account may not read that dashboard",
    ),
    (
        "no_dashboard",
        404,
        _err(404, "Dashboard not found", "dashboards.notFound"),
        NF,
        "no dashboard with that uid",
    ),
    (
        "db_error",
        500,
        _err(500, "Failed to get dashboard", "dashboards.internalError"),
        NET,
        "Grafana's database failed",
    ),
]
for _id, _status, _body, _expect, _why in _GET:

    def _run(ctx: Http, s: int = _status, b: Any = _body) -> Any:
        ctx.http.set(s, b)
        return run_async(_dashboard(*_at(ctx)))

    FAM.add(_id, _expect, f"HTTP {_status}: {_why}", _run)

transport_cases(FAM, lambda host, port: run_async(_dashboard(host, port)), dns_port=3000)

_CREATE = [
    (
        "folder_exists",
        409,
        _err(409, "a folder with the same name already exists", "folder.same-name-exists"),
        EXISTS,
        "a folder named Payments already exists",
    ),
    (
        "uid_taken",
        409,
        _err(409, "a folder with the same uid already exists", "folder.same-uid-exists"),
        EXISTS,
        "a folder with that uid already exists",
    ),
    (
        "empty_title",
        400,
        _err(400, "folder title cannot be empty", "folder.title-empty"),
        INT,
        "the folder title is empty (the pack's input)",
    ),
]
for _id, _status, _body, _expect, _why in _CREATE:

    def _run(ctx: Http, s: int = _status, b: Any = _body) -> Any:
        ctx.http.set(s, b)
        return run_async(_folder(*_at(ctx)))

    FAM.add(_id, _expect, f"HTTP {_status}: {_why}", _run)


def _bad_gateway(ctx: Http) -> Any:
    ctx.http.set(
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 "
        "Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
        content_type="text/html",
    )
    return run_async(_dashboard(*_at(ctx)))


FAM.add("bad_gateway", NET, "HTTP 502: nginx in front of Grafana has no upstream", _bad_gateway)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: run_async(_dashboard("127.0.0.1", c.net.garbage)),
)
