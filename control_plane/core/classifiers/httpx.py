"""httpx and httpcore, and their numbered forks (``httpx2``, underneath the OpenAI and
Anthropic SDKs).

Transport errors are recognised by name (httpx is not imported); the timeouts
(``ConnectTimeout``, ``ReadTimeout``, ``PoolTimeout``...) need no row: the words of their
class names say it (``control_plane.core.evidence.name_proposal``). Connection-level
errors are *weak*: the exception they wrap, when there is one, knows more (a rejected
certificate, a missing Unix socket). httpcore re-raises ``from None``, which cuts the
cause chain, but keeps the original exception as ``args[0]``, which the chain walk
follows. ``HTTPStatusError`` carries a ``response`` and is left to the HTTP-status table.
"""

from __future__ import annotations

from control_plane.core.classify import Classification, TypeRule, match_type_rules
from control_plane.core.hookspecs import hookimpl

__all__ = ["TYPES", "classify_exception"]

PLUGIN = "httpx"
# No EXCEPTION_MODULES: the forks the LLM SDKs ship (``httpx2``, ``httpcore2``) are matched
# too (:class:`~control_plane.core.classify.TypeRule`), whatever their exact name.

_CONNECT = "could not connect to the HTTP server"
_CUT = "the HTTP connection failed or was closed while the request or reply was in flight"
_PROTOCOL = "the HTTP server closed the connection or broke the protocol mid-reply"
_LOCAL = "the HTTP request could not be made as written (client-side error)"


def _rows(package: str) -> tuple[TypeRule, ...]:
    return (
        TypeRule(f"{package}.ProxyError", "network_error", "the HTTP proxy failed", weak=True),
        TypeRule(f"{package}.ConnectError", "network_error", _CONNECT, weak=True),
        TypeRule(f"{package}.ReadError", "network_error", _CUT, weak=True),
        TypeRule(f"{package}.WriteError", "network_error", _CUT, weak=True),
        TypeRule(f"{package}.RemoteProtocolError", "network_error", _PROTOCOL, weak=True),
        TypeRule(f"{package}.LocalProtocolError", "internal_error", _LOCAL),
        TypeRule(f"{package}.UnsupportedProtocol", "internal_error", _LOCAL),
        TypeRule(f"{package}.NetworkError", "network_error", _CUT, weak=True),
    )


#: httpx first (it wraps httpcore), then httpcore, most specific class first.
TYPES: tuple[TypeRule, ...] = (
    *_rows("httpx"),
    TypeRule("httpx.TooManyRedirects", "internal_error", "the HTTP server redirected too often"),
    TypeRule(
        "httpx.DecodingError",
        "internal_error",
        "the HTTP reply could not be decoded (content encoding)",
    ),
    TypeRule("httpx.InvalidURL", "internal_error", "the URL is not valid"),
    TypeRule("httpx.StreamError", "internal_error", "the HTTP stream was misused"),
    *_rows("httpcore"),
)


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """An httpx or httpcore exception by its type (see :data:`TYPES`)."""
    return match_type_rules(exc, TYPES, PLUGIN)
