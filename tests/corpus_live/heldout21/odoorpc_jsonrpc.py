"""odoorpc (OdooRPC, the JSON-RPC client of the Odoo ERP, sync, on urllib): logs in and
creates a contact (``res.partner``) through ``execute_kw`` against a fake Odoo server on
127.0.0.1. Odoo answers its errors on **HTTP 200**, as a JSON-RPC ``error`` object whose
``data.name`` is the Python exception Odoo raised (``odoo.exceptions.AccessDenied``,
``AccessError``, ``MissingError``, ``ValidationError``, ``UserError``, a session expired with
code 100, psycopg2's serialization failure) and ``data.message`` its text: a wrong API key, a
login refused (``login`` answering ``false``), a missing access right, a record deleted, a
duplicate the SQL constraint refuses, an unknown field, a closed period, a database that does
not exist, a concurrent update; plus the HTML pages of Odoo.sh's proxy, the client's own
timeout and the transport failures."""

from __future__ import annotations

import json
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Http,
    Reply,
    family,
    http_setup,
)

FAM = family("odoorpc", "fake Odoo server (JSON-RPC)", http_setup, half="heldout21")

_DB = "acme-prod"
_TB = (
    "Traceback (most recent call last):\n"
    '  File "/home/odoo/src/odoo/odoo/http.py", line 1767, in _serve_db\n'
    "    return service_model.retrying(self._serve_ir_http, self.env)\n"
)


def _create(host: str, port: int) -> Any:
    import odoorpc

    odoo = odoorpc.ODOO(host, protocol="jsonrpc", port=port, timeout=1.0, version="17.0")
    odoo.login(_DB, "integration@acme.example", "PLANTED-api-key-3f9c1d")
    return odoo.execute_kw(
        "res.partner",
        "create",
        [
            {
                "name": "Azure Interior",
                "email": "azure.interior24@example.com",
                "vat": "BE0477472701",
            }
        ],
    )


def _err(name: str, message: str, code: int = 200, title: str = "Odoo Server Error") -> Any:
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": code,
            "message": title,
            "data": {
                "name": name,
                "debug": _TB + f"{name}: {message}\n",
                "message": message,
                "arguments": [message],
                "context": {},
            },
        },
    }


def _serve(ctx: Http, error: Any, login: Any = 2) -> None:
    """``common.login`` answers ``login``, ``context_get`` a context, the create ``error``."""

    def route(method: str, path: str, body: bytes) -> Reply | None:
        req = json.loads(body or b"{}")
        params = req.get("params", {})
        rid = req.get("id")
        if params.get("method") == "login":
            return Reply(200, {"jsonrpc": "2.0", "id": rid, "result": login})
        args = params.get("args") or []
        if len(args) > 4 and args[4] == "context_get":
            ctx_ = {"lang": "en_US", "tz": "Europe/Brussels", "uid": 2}
            return Reply(200, {"jsonrpc": "2.0", "id": rid, "result": ctx_})
        if isinstance(error, Reply):
            return error
        return Reply(200, {**error, "id": rid})

    ctx.http.set(200, {})
    ctx.http.route = route


def _case(id: str, expect: frozenset[str], why: str, error: Any, login: Any = 2) -> None:
    def run(ctx: Http) -> Any:
        _serve(ctx, error, login)
        return _create(LOOPBACK, ctx.http.port)

    FAM.add(id, expect, why, run)


_case(
    "login_refused",
    AUTH,
    "HTTP 200: common.login answers false, the login or API key is wrong",
    None,
    login=False,
)
_case(
    "access_denied",
    AUTH,
    "HTTP 200: odoo.exceptions.AccessDenied, the API key was revoked after login",
    _err("odoo.exceptions.AccessDenied", "Access Denied"),
)
_case(
    "session_expired",
    AUTH,
    "HTTP 200: error code 100, the session is no longer valid",
    _err(
        "odoo.http.SessionExpiredException",
        "Session expired",
        code=100,
        title="Odoo Session Expired",
    ),
)
_case(
    "access_error",
    AUTH,
    "HTTP 200: odoo.exceptions.AccessError, the user's groups may not create contacts",
    _err(
        "odoo.exceptions.AccessError",
        "You are not allowed to create 'Contact' (res.partner) records.\n\nThis operation is "
        "allowed for the following groups:\n\t- Extra Rights/Contact Creation\n\nContact your "
        "administrator to request access if necessary.",
    ),
)
_case(
    "missing_record",
    NF,
    "HTTP 200: odoo.exceptions.MissingError, a record the create refers to was deleted",
    _err(
        "odoo.exceptions.MissingError",
        "Record does not exist or has been deleted.\n(Record: res.partner.category(14,), User: 2)",
    ),
)
_case(
    "duplicate",
    EXISTS,
    "HTTP 200: a ValidationError from the SQL unique constraint, the contact already exists",
    _err(
        "odoo.exceptions.ValidationError",
        "The operation cannot be completed: A contact with the same VAT number already exists "
        "in this company.",
    ),
)
_case(
    "invalid_field",
    INT,
    "HTTP 200: builtins.ValueError, a field the model does not have (the caller's input)",
    _err("builtins.ValueError", "Invalid field 'vat_number' on model 'res.partner'"),
)
_case(
    "user_error",
    INT,
    "HTTP 200: odoo.exceptions.UserError, a business rule refuses the record",
    _err(
        "odoo.exceptions.UserError",
        "You cannot create a contact on a company whose fiscal period is locked "
        "(lock date: 12/31/2025).",
    ),
)
_case(
    "database_missing",
    NF | INT,
    "HTTP 200: psycopg2.OperationalError, the database named at login does not exist",
    _err(
        "psycopg2.OperationalError",
        f'connection to server on socket "/var/run/postgresql/.s.PGSQL.5432" failed: FATAL:  '
        f'database "{_DB}" does not exist\n',
    ),
)
_case(
    "serialization",
    NET | INT,
    "HTTP 200: psycopg2 SerializationFailure after Odoo's own retries, a concurrent update",
    _err(
        "psycopg2.errors.SerializationFailure",
        "could not serialize access due to concurrent update\n",
    ),
)
_case(
    "bad_gateway",
    NET,
    "HTTP 502: Odoo.sh's proxy reached no worker (an HTML page)",
    Reply(
        502,
        "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
        "</h1></center><hr><center>nginx</center></body></html>",
        {},
        "text/html",
    ),
)
_case(
    "maintenance",
    NET,
    "HTTP 503: the database is being upgraded (an HTML page)",
    Reply(
        503,
        "<html><head><title>Odoo - Maintenance</title></head><body><h1>Maintenance in "
        "progress</h1><p>The database is being upgraded, please come back later.</p>"
        "</body></html>",
        {},
        "text/html",
    ),
)

FAM.add("refused", NET, "nothing listens", lambda c: _create(LOOPBACK, c.net.closed))
FAM.add("dns", NET, "host does not resolve", lambda c: _create(UNRESOLVABLE, 8069))
FAM.add("silent", TO, "server never answers", lambda c: _create(LOOPBACK, c.net.silent))
FAM.add("dropped", NET, "closed at once", lambda c: _create(LOOPBACK, c.net.close_now))
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol instead of HTTP",
    lambda c: _create(LOOPBACK, c.net.garbage),
)
