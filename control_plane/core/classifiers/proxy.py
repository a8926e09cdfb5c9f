"""An HTTP proxy's refusal of a tunnel (``CONNECT``), which the clients carry only as text.

An HTTPS request through a proxy starts with ``CONNECT host:port``; when the proxy answers
anything but 2xx, ``http.client`` (under ``urllib`` and ``requests``/``urllib3``) raises a
bare ``OSError("Tunnel connection failed: 407 Proxy Authentication Required")`` and
httpcore (under httpx) a ``ProxyError("407 Proxy Authentication Required")``: no status
attribute, no errno. The status is read back from that text and mapped like any HTTP status
(:data:`~control_plane.core.classify.HTTP_STATUS_CODES`: 407 and 403 are ``auth_failed``,
retrying cannot help; 502-504 the proxy's own network trouble); a status the table does not
know is ``internal_error``. Strong, so it wins over the clients' generic (weak) proxy
errors that wrap it.
"""

from __future__ import annotations

import re

from control_plane.core.classify import (
    HTTP_5XX_CODE,
    HTTP_STATUS_CODES,
    Classification,
    class_names,
    exception_text,
    safe_attr,
)
from control_plane.core.hookspecs import hookimpl

__all__ = ["classify_exception", "tunnel_status"]

PLUGIN = "proxy"

#: ``http.client.HTTPConnection._tunnel``'s text.
_HTTP_CLIENT = re.compile(r"Tunnel connection failed: (\d{3})\b")
#: httpcore's ``ProxyError`` text: the status and the reason phrase.
_HTTPCORE = re.compile(r"(\d{3}) ")
#: Where httpcore's (and httpx's copy of it) proxy error lives.
_HTTPCORE_ERRORS = frozenset({("httpcore", "ProxyError"), ("httpx", "ProxyError")})


def tunnel_status(exc: BaseException) -> int | None:
    """The status a proxy answered to ``CONNECT``, if ``exc`` is a client's report of it."""
    text = exception_text(exc)[:200]
    found = None
    if type(exc) is OSError and safe_attr(exc, "errno") is None:
        found = _HTTP_CLIENT.match(text)
    elif any(
        name == "ProxyError" and (module.split(".")[0], name) in _HTTPCORE_ERRORS
        for module, name in class_names(type(exc))
    ):
        found = _HTTPCORE.match(text)
    if found is None:
        return None
    status = int(found.group(1))
    return status if 300 <= status <= 599 else None


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """A proxy's non-2xx answer to ``CONNECT``, by the status in the client's text."""
    status = tunnel_status(exc)
    if status is None:
        return None
    code = HTTP_STATUS_CODES.get(status)
    if code is None:
        code = HTTP_5XX_CODE if status >= 500 else "internal_error"
    return Classification(
        code=code,
        message=f"the HTTP proxy answered {status} to the tunnel request (CONNECT)",
        # A proxy's 429: its Retry-After does not reach the text (the default is set).
        rule=f"{PLUGIN}:connect_{status}",
    )
