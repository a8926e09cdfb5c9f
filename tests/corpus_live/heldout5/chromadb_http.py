"""chromadb-client (Chroma's thin HTTP client, ``chromadb.HttpClient``) against a fake Chroma
server (API v2) on 127.0.0.1: the client first asks ``/auth/identity`` and checks the tenant and
the database, then makes the call. Errors are Chroma's JSON ``{"error": NAME, "message": ...}``
that the client turns into ``chromadb.errors.*`` by NAME (``NotFoundError``,
``UniqueConstraintError``, ``InvalidArgumentError``, ``QuotaError``, ``RateLimitError``,
``AuthError``, ``AuthorizationError``, ``InternalError``); any other body becomes a bare
``Exception(body)``. Connection failures while it starts are re-raised as ``ValueError("Could
not connect to a Chroma server...")``. The client sets no timeout at all (httpx
``timeout=None``), so there is no case of a silent server. Telemetry is off."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    UNRESOLVABLE,
    Http,
    Reply,
    family,
    http_setup,
)

FAM = family("chromadb", "fake Chroma server (API v2)", http_setup, half="heldout5")

_T, _D = "default_tenant", "default_database"
_DB = f"/api/v2/tenants/{_T}/databases/{_D}"
_COLL: dict[str, Any] = {
    "id": "5c3f9a2e-8d41-4b7a-9f0e-2a6b1c4d7e90",
    "name": "docs",
    "configuration_json": {},
    "metadata": None,
    "dimension": 384,
    "tenant": _T,
    "database": _D,
    "version": 0,
    "log_position": 0,
}


def _started(method: str, path: str, body: bytes) -> Reply | None:
    """The answers of a healthy server to what the client asks while it starts."""
    if path == "/api/v2/auth/identity":
        return Reply(200, {"user_id": "", "tenant": _T, "databases": [_D]})
    if path == f"/api/v2/tenants/{_T}":
        return Reply(200, {"name": _T})
    if path == _DB:
        return Reply(200, {"id": "0f7c2d5e-1111-4a2b-9c3d-4e5f60718293", "name": _D, "tenant": _T})
    if method == "GET" and path == f"{_DB}/collections/docs":
        return Reply(200, _COLL)
    return None


def _client(url: str) -> Any:
    import chromadb
    from chromadb.config import Settings

    parts = urlsplit(url)
    return chromadb.HttpClient(
        host=parts.hostname or LOOPBACK,
        port=parts.port or 80,
        headers={"x-chroma-token": "ck-PLANTEDchromatoken000000"},
        settings=Settings(anonymized_telemetry=False),
    )


def _get(url: str) -> Any:
    return _client(url).get_collection("reports")


def _create(url: str) -> Any:
    return _client(url).create_collection("docs")


def _add(url: str) -> Any:
    coll = _client(url).get_collection("docs")
    return coll.add(ids=["doc-1"], embeddings=[[0.1, 0.2, 0.3]], documents=["hello"])


def _err(name: str, message: str) -> dict[str, str]:
    return {"error": name, "message": message}


def _case(
    id: str,
    status: int,
    body: Any,
    expect: frozenset[str],
    why: str,
    call: Any = _get,
    *,
    started: bool = True,
    content_type: str = "application/json",
) -> None:
    def run(ctx: Http) -> Any:
        ctx.http.set(
            status, body, {"chroma-trace-id": "6f1d2c3b4a5968778695a4b3c2d1e0f1"}, content_type
        )
        if started:
            ctx.http.route = _started
        return call(ctx.http.url)

    FAM.add(id, expect, f"HTTP {status}: {why}", run)


_case(
    "bad_token",
    401,
    _err("AuthorizationError", "Unauthorized"),
    AUTH,
    "the token is wrong: the identity call fails",
    started=False,
)
_case(
    "forbidden",
    403,
    _err("AuthError", "Forbidden"),
    AUTH,
    "the token may not use this tenant",
    started=False,
)
_case(
    "no_collection",
    404,
    _err("NotFoundError", "Collection [reports] does not exists"),
    NF,
    "the collection does not exist",
)
_case(
    "collection_exists",
    409,
    _err("UniqueConstraintError", "Collection [docs] already exists"),
    EXISTS | INT,
    "create_collection of a name that exists",
    _create,
)
_case(
    "collection_quota",
    400,
    _err(
        "QuotaError",
        "Quota exceeded: 'NUM_COLLECTIONS' exceeded quota limit for action 'CreateCollection': "
        "current usage of 1000 exceeds limit of 1000. "
        "Request a quota increase at https://trychroma.com/quota-increase",
    ),
    QUOTA | INT,
    "the database's collection quota is used up",
    _create,
)
_case(
    "bad_dimension",
    400,
    _err(
        "InvalidArgumentError",
        "Collection expecting embedding with dimension of 384, got 3",
    ),
    INT,
    "an embedding of the wrong dimension (the pack's input)",
    _add,
)
_case(
    "rate_limited",
    429,
    _err("RateLimitError", "Rate limit exceeded"),
    RL,
    "throttled: no delay sent",
)
_case(
    "internal",
    500,
    _err("InternalError", "Error executing plan: Internal error: error returned from database"),
    NET,
    "Chroma failed inside",
)
_case(
    "proxy_502",
    502,
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    "</body>\r\n</html>\r\n",
    NET,
    "the reverse proxy in front of Chroma has no upstream (the client raises a bare Exception)",
    content_type="text/html",
)


def _tenant_missing(method: str, path: str, body: bytes) -> Reply | None:
    if path == "/api/v2/auth/identity":
        return Reply(200, {"user_id": "", "tenant": None, "databases": None})
    return None


def _no_tenant(ctx: Http) -> Any:
    import chromadb
    from chromadb.config import Settings

    ctx.http.set(404, _err("NotFoundError", "Tenant [acme] not found"))
    ctx.http.route = _tenant_missing
    return chromadb.HttpClient(
        host=LOOPBACK,
        port=ctx.http.port,
        tenant="acme",
        settings=Settings(anonymized_telemetry=False),
    )


FAM.add("no_tenant", NF, "HTTP 404: the tenant the client names does not exist", _no_tenant)
FAM.add(
    "refused",
    NET,
    "nothing listens (the client says it could not connect)",
    lambda c: _get(f"http://{LOOPBACK}:{c.net.closed}"),
)
FAM.add("dns", NET, "host does not resolve", lambda c: _get(f"http://{UNRESOLVABLE}:8000"))
FAM.add(
    "dropped",
    NET,
    "closed at once",
    lambda c: _get(f"http://{LOOPBACK}:{c.net.close_now}"),
)
