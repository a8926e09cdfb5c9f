"""An HTTP status that a client carries only in its text: a proxy's refusal of a tunnel
(``CONNECT``), and retries that ran out on a status.

An HTTPS request through a proxy starts with ``CONNECT host:port``; when the proxy answers
anything but 2xx, ``http.client`` (under ``urllib`` and ``requests``/``urllib3``) raises a
bare ``OSError("Tunnel connection failed: 407 Proxy Authentication Required")`` and
httpcore (under httpx) a ``ProxyError("407 Proxy Authentication Required")``: no status
attribute, no errno. urllib3's ``Retry`` exhausted on a status of ``status_forcelist``
raises ``MaxRetryError``/``ResponseError`` (requests: ``RetryError``) whose text alone says
"too many 429 error responses". The status is read back from that text (:data:`TEXTS`)
and mapped like any HTTP status (:data:`~control_plane._kernel.fact_rules.STATUS_CODES`:
407 and 403 are ``auth_failed``, retrying cannot help; 502-504 network trouble); a status
the table does not know is ``internal_error``. Strong, so it wins over the clients' generic
(weak) errors that wrap it.
"""

from __future__ import annotations

import re

from control_plane._features.libraries._data import DATA
from control_plane._kernel.classify import (
    Classification,
    class_names,
    exception_text,
    safe_attr,
)
from control_plane._kernel.fact_rules import STATUS_5XX_CODE, STATUS_CODES, type_cache
from control_plane._kernel.hookspecs import hookimpl

__all__ = ["TEXTS", "classify_exception"]

#: ``[proxy] texts`` of ``tables.toml``: (rule, classes ``(top-level module or "*", name)``
#: -- none: a bare ``OSError`` without errno --, the text with the status, the message
#: with a ``{status}`` slot).
TEXTS: tuple[tuple[str, frozenset[tuple[str, str]], re.Pattern[str], str], ...] = tuple(
    (
        rule,
        frozenset((m, n) for m, _, n in (c.partition(".") for c in classes)),
        re.compile(regex),
        message,
    )
    for rule, classes, regex, message in DATA["proxy"]["texts"]
)


@type_cache(recompute=True, maxsize=1024)
def _rows_of(klass: type) -> tuple[int, ...]:
    """The :data:`TEXTS` rows that name a class of ``klass``'s MRO."""
    names = {(module.split(".")[0], name) for module, name in class_names(klass)}
    names |= {("*", name) for _, name in names}
    return tuple(i for i, row in enumerate(TEXTS) if row[1] & names)


def _status(exc: BaseException) -> tuple[int, str, str] | None:
    klass, rows = type(exc), _rows_of(type(exc))
    if klass is OSError and safe_attr(exc, "errno") is None:
        rows = (*(i for i, row in enumerate(TEXTS) if not row[1]), *rows)
    for index in rows:
        rule, _, pattern, message = TEXTS[index]
        found = pattern.search(exception_text(exc))
        status = int(found.group(1)) if found is not None else 0
        if 300 <= status <= 599:
            return status, rule.format(status=status), message.format(status=status)
    return None


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """An HTTP status read from a client's text (:data:`TEXTS`)."""
    found = _status(exc)
    if found is None:
        return None
    status, rule, message = found
    code = STATUS_CODES.get(status)
    if code is None:
        code = STATUS_5XX_CODE if status >= 500 else "internal_error"
    # A proxy's 429: its Retry-After does not reach the text (the default is set).
    return Classification(code=code, message=message, rule=rule)
