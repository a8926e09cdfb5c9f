"""requests and urllib3 (also underneath boto3/botocore, docker, kubernetes, ...).

``requests.ConnectionError`` wraps urllib3's ``MaxRetryError`` whose ``reason`` is the real
failure; the chain walk follows both, so those rows are *weak*. A ``RetryError``
(urllib3 ``Retry`` exhausted on a status in ``status_forcelist``) carries the status only
in its text ("too many 429 error responses"); it is read back from there.
"""

from __future__ import annotations

import re

from control_plane.core.classify import (
    HTTP_5XX_CODE,
    HTTP_STATUS_CODES,
    Classification,
    TypeRule,
    class_names,
    exception_text,
    match_type_rules,
)
from control_plane.core.hookspecs import hookimpl

__all__ = ["TYPES", "classify_exception"]

PLUGIN = "requests"

_CONNECT = "could not connect to the HTTP server"
_CUT = "the HTTP connection was closed or reset before the reply was complete"
_LOCAL = "the HTTP request could not be made as written (client-side error)"

#: requests first, then urllib3; most specific class first (urllib3's
#: ``NewConnectionError`` subclasses ``ConnectTimeoutError``, so it comes before it).
TYPES: tuple[TypeRule, ...] = (
    TypeRule("requests.ConnectTimeout", "timeout", "connecting to the HTTP server timed out"),
    TypeRule("requests.ReadTimeout", "timeout", "the HTTP server did not answer in time"),
    TypeRule("requests.Timeout", "timeout", "the HTTP request timed out"),
    TypeRule("requests.ChunkedEncodingError", "network_error", _CUT),
    TypeRule(
        "requests.ContentDecodingError", "internal_error", "the HTTP reply could not be decoded"
    ),
    TypeRule("requests.TooManyRedirects", "internal_error", "the HTTP server redirected too often"),
    TypeRule("requests.InvalidURL", "internal_error", _LOCAL),
    TypeRule("requests.MissingSchema", "internal_error", _LOCAL),
    TypeRule("requests.InvalidSchema", "internal_error", _LOCAL),
    TypeRule("requests.InvalidHeader", "internal_error", _LOCAL),
    TypeRule("requests.ProxyError", "network_error", "the HTTP proxy failed", weak=True),
    TypeRule("requests.SSLError", "network_error", _CONNECT, weak=True),
    TypeRule("requests.ConnectionError", "network_error", _CONNECT, weak=True),
    TypeRule("urllib3.NameResolutionError", "network_error", "the host name could not be resolved"),
    TypeRule("urllib3.NewConnectionError", "network_error", _CONNECT, weak=True),
    TypeRule("urllib3.ConnectTimeoutError", "timeout", "connecting to the HTTP server timed out"),
    TypeRule("urllib3.ReadTimeoutError", "timeout", "the HTTP server did not answer in time"),
    TypeRule(
        "urllib3.EmptyPoolError",
        "timeout",
        "no HTTP connection became free in the pool in time",
    ),
    TypeRule("urllib3.ProtocolError", "network_error", _CUT, weak=True),
    TypeRule("urllib3.SSLError", "network_error", _CONNECT, weak=True),
    TypeRule("urllib3.ProxyError", "network_error", "the HTTP proxy failed", weak=True),
    TypeRule("urllib3.LocationParseError", "internal_error", _LOCAL),
    TypeRule("urllib3.DecodeError", "internal_error", "the HTTP reply could not be decoded"),
)

_TOO_MANY = re.compile(r"too many (\d{3}) error responses")


def _retry_exhausted(exc: BaseException) -> Classification | None:
    if not any(
        name in {"RetryError", "MaxRetryError", "ResponseError"}
        for _, name in class_names(type(exc))
    ):
        return None
    found = _TOO_MANY.search(exception_text(exc))
    if found is None:
        return None
    status = int(found.group(1))
    code = HTTP_STATUS_CODES.get(status)
    if code is None and 500 <= status <= 599:
        code = HTTP_5XX_CODE
    if code is None:
        return None
    return Classification(
        code=code,
        message=f"the HTTP server kept answering {status} until the retries ran out",
        rule=f"{PLUGIN}:retries_exhausted",  # rate_limited: the default retry_after
    )


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """A requests or urllib3 exception by type (see :data:`TYPES`), or exhausted retries."""
    return _retry_exhausted(exc) or match_type_rules(exc, TYPES, PLUGIN)
