"""aiohttp client errors.

Connector errors wrap the ``OSError`` they came from (``os_error``, and ``__cause__``),
so they are *weak*: a refused connection, a DNS failure or a TLS failure underneath
decides. ``ClientResponseError`` carries ``status`` and ``headers`` and is left to the
extracted facts; the timeouts (``ServerTimeoutError`` and its subclasses) are
``asyncio.TimeoutError`` and need no row.
"""

from __future__ import annotations

from control_plane.core.classify import Classification, TypeRule, match_type_rules
from control_plane.core.hookspecs import hookimpl

__all__ = ["EXCEPTION_MODULES", "TYPES", "classify_exception"]

PLUGIN = "aiohttp"
#: Asked only about exceptions of these modules' classes (runtime.plugins.EXCEPTION_MODULES).
EXCEPTION_MODULES = ("aiohttp",)

_CUT = "the HTTP server closed the connection before the reply was complete"

TYPES: tuple[TypeRule, ...] = (
    TypeRule(
        "aiohttp.ClientConnectorCertificateError",
        "auth_failed",
        "the server's TLS certificate failed verification (untrusted, expired or for another "
        "host); retrying will not change it",
    ),
    TypeRule(
        "aiohttp.ClientConnectorDNSError", "network_error", "the host name could not be resolved"
    ),
    TypeRule(
        "aiohttp.ClientConnectorError",
        "network_error",
        "could not connect to the HTTP server",
        weak=True,
    ),
    TypeRule("aiohttp.ServerDisconnectedError", "network_error", _CUT),
    TypeRule("aiohttp.ClientPayloadError", "network_error", _CUT, weak=True),
    TypeRule(
        "aiohttp.ServerFingerprintMismatch",
        "auth_failed",
        "the server's TLS certificate does not match the pinned fingerprint",
    ),
    TypeRule("aiohttp.TooManyRedirects", "internal_error", "the HTTP server redirected too often"),
    TypeRule("aiohttp.InvalidURL", "internal_error", "the URL is not valid"),
    TypeRule(
        "aiohttp.ContentTypeError",
        "internal_error",
        "the HTTP reply did not have the expected content type",
    ),
    TypeRule("aiohttp.ClientOSError", "network_error", "the HTTP connection failed", weak=True),
    TypeRule(
        "aiohttp.ClientConnectionError",
        "network_error",
        "the HTTP connection failed",
        weak=True,
    ),
)


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """An aiohttp exception by type (see :data:`TYPES`)."""
    return match_type_rules(exc, TYPES, PLUGIN)
