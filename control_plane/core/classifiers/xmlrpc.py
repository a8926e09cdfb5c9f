"""``xmlrpc.client``: the HTTP status of a ``ProtocolError`` is its ``errcode`` (read by the
HTTP-status table); a ``Fault`` is the server's application error.
"""

from __future__ import annotations

from control_plane.core.classify import Classification, TypeRule, match_type_rules
from control_plane.core.hookspecs import hookimpl

__all__ = ["EXCEPTION_MODULES", "TYPES", "classify_exception"]

PLUGIN = "xmlrpc"
#: Asked only about exceptions of these modules' classes (runtime.plugins.EXCEPTION_MODULES).
EXCEPTION_MODULES = ("xmlrpc",)

TYPES: tuple[TypeRule, ...] = (
    TypeRule("xmlrpc.client.Fault", "internal_error", "the XML-RPC server returned a fault"),
    TypeRule(
        "xmlrpc.client.ResponseError",
        "internal_error",
        "the XML-RPC server sent a reply that is not valid XML-RPC",
    ),
)


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """An ``xmlrpc.client`` exception by type (see :data:`TYPES`)."""
    return match_type_rules(exc, TYPES, PLUGIN)
