"""WebSocket clients (the ``websockets`` library): a refused opening handshake, a closed
connection, a URI that is no WebSocket URI.

* A handshake the server rejects with an HTTP status (``InvalidStatus``,
  ``InvalidProxyStatus``) carries ``response.status_code`` and ``response.headers``: the
  engine's HTTP-status table decides (401/403 ``auth_failed``, 404 ``not_found``, 429 and
  503 with ``Retry-After`` ``rate_limited``, ...), as for every HTTP client. A status the
  table does not list (a plain ``200``: the URL is no WebSocket endpoint) stays
  ``internal_error``.
* A refused connection, a DNS failure, an opening-handshake timeout (``open_timeout``) and
  a rejected certificate surface as the ``OSError``, ``TimeoutError`` or ``ssl`` error
  itself: the engine and the TLS plugin classify them.
* ``ConnectionClosed``: what matters is *who closed first* and with which close code. The
  server's code (``rcvd``) -> :data:`CLOSE_CODES`, following the HTTP table where one
  status means the same (1011 as 500: ``network_error``; 1013 "try again later" as 503
  with ``Retry-After``: ``rate_limited`` with the default ``retry_after``; 1014 as 502;
  the codes IANA's registry names for all servers, 3000 "Unauthorized" and 3003
  "Forbidden" as 401 and 403 ``auth_failed``, 3008 "Timeout" as 408 ``timeout``).
  1008 (policy violation) is RFC 6455's generic refusal: ``auth_failed`` only when the
  close reason names authentication (:data:`AUTH_REASON`), else ``internal_error`` (the
  server refused what the pack sent; retrying or re-authenticating cannot help). Codes no
  row lists (4000-4999 are private to each application) -> ``internal_error``.
  A close the client started itself (``sent`` first) -> ``timeout`` for websockets'
  keepalive ("keepalive ping timeout": the peer stopped answering pings), else
  ``internal_error`` (a local size limit, a protocol error the server made, or the pack's
  own close). No close frame either way (code 1006, the TCP connection dropped) ->
  ``network_error``, weak: the ``OSError`` underneath decides when there is one.
* ``InvalidMessage`` (no valid HTTP answer to the opening handshake): the server closed
  the connection before answering (an ``EOFError`` underneath) -> ``network_error``, as
  httpx's "server disconnected"; any other reply that is not HTTP -> ``internal_error``,
  weak.

The ``websockets`` package is not imported here: its exceptions are recognised by class
name, and the close frames are read by attribute (``rcvd.code``, ``rcvd.reason``; never
the deprecated ``ConnectionClosed.code``, which warns).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from control_plane._features.libraries._data import DATA, code_table, type_rules
from control_plane._kernel.classify import (
    Classification,
    class_names,
    match_type_rules,
    safe_attr,
)
from control_plane._kernel.hookspecs import hookimpl

__all__ = ["AUTH_REASON", "CLOSE_CODES", "EXCEPTION_MODULES", "TYPES", "classify_exception"]

PLUGIN = "websockets"
#: Asked only about exceptions of these modules' classes (runtime.plugins.EXCEPTION_MODULES).
EXCEPTION_MODULES = ("websockets",)


#: The server's close code (the server closed first) -> (code, fixed message).
CLOSE_CODES: Mapping[int, tuple[str, str]] = code_table("websockets", "close_codes")

#: A 1008 close reason that names authentication: ``auth_failed``, not ``internal_error``
#: (``auth_reason`` of ``[websockets]`` in ``tables.toml``: whole words, any case).
AUTH_REASON = re.compile(rf"\b(?:{'|'.join(DATA['websockets']['auth_reason'])})\b", re.IGNORECASE)

TYPES = type_rules("websockets")

_KEEPALIVE = "keepalive ping timeout"


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _closed(exc: BaseException) -> Classification:
    rcvd = safe_attr(exc, "rcvd")
    sent = safe_attr(exc, "sent")
    if rcvd is not None and (sent is None or safe_attr(exc, "rcvd_then_sent") is True):
        status = _int(safe_attr(rcvd, "code"))
        code, message = CLOSE_CODES.get(
            status if status is not None else -1,
            ("internal_error", "the WebSocket server closed with a code no table here knows"),
        )
        rule = f"{PLUGIN}:close:{status}"
        if status == 1008:
            reason = safe_attr(rcvd, "reason")
            if isinstance(reason, str) and AUTH_REASON.search(reason):
                code, message = "auth_failed", "the WebSocket server closed: not authorised"
                rule += ":auth"
        return Classification(code=code, message=message, rule=rule)
    if sent is not None:
        status = _int(safe_attr(sent, "code"))
        reason = safe_attr(sent, "reason")
        if status == 1011 and isinstance(reason, str) and reason.startswith(_KEEPALIVE):
            return Classification(
                code="timeout",
                message="the WebSocket server stopped answering keepalive pings",
                rule=f"{PLUGIN}:keepalive",
            )
        return Classification(
            code="internal_error",
            message="the WebSocket client closed the connection itself",
            rule=f"{PLUGIN}:sent:{status}",
        )
    return Classification(
        code="network_error",
        message="the WebSocket connection dropped without a closing handshake",
        rule=f"{PLUGIN}:abnormal",
        weak=True,
    )


def _invalid_message(exc: BaseException) -> Classification:
    cause = safe_attr(exc, "__cause__")
    if isinstance(cause, EOFError):
        return Classification(
            code="network_error",
            message="the WebSocket server closed the connection during the opening handshake",
            rule=f"{PLUGIN}:handshake_eof",
        )
    return Classification(
        code="internal_error",
        message="the answer to the WebSocket opening handshake is not valid HTTP",
        rule=f"{PLUGIN}:handshake_invalid",
        weak=True,
    )


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """A ``websockets`` exception: a close by its close code, the rest by type."""
    names = {
        name
        for module, name in class_names(type(exc))
        if module == "websockets" or module.startswith("websockets.")
    }
    if not names:
        return None
    if "ConnectionClosed" in names:
        return _closed(exc)
    if "InvalidMessage" in names:
        return _invalid_message(exc)
    return match_type_rules(exc, TYPES, PLUGIN)
