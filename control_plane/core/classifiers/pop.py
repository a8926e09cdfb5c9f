"""``poplib``: POP3 extended response codes (RFC 2449, RFC 3206) in the text of
``error_proto`` (``-ERR [AUTH] ...``).

Without a bracketed code a ``-ERR`` says nothing specific and is not classified.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from control_plane.core.classify import (
    Classification,
    class_names,
    exception_text,
)
from control_plane.core.hookspecs import hookimpl

__all__ = ["EXCEPTION_MODULES", "RESPONSE_CODES", "classify_exception"]

PLUGIN = "pop"
#: Asked only about exceptions of these modules' classes (runtime.plugins.EXCEPTION_MODULES).
EXCEPTION_MODULES = ("poplib",)

#: POP3 response code -> (baseline code, fixed message).
RESPONSE_CODES: Mapping[str, tuple[str, str]] = {
    "AUTH": ("auth_failed", "the POP3 server rejected the credentials"),
    "SYS/TEMP": ("network_error", "the POP3 server failed for now (a transient error)"),
    "IN-USE": ("network_error", "another session holds the POP3 mailbox for now"),
    "LOGIN-DELAY": ("rate_limited", "the POP3 server refuses logins this soon after the last"),
}
_CODE = re.compile(r"-ERR \[(" + "|".join(map(re.escape, RESPONSE_CODES)) + r")\]", re.IGNORECASE)


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """A ``poplib.error_proto`` by response code (:data:`RESPONSE_CODES`)."""
    if ("poplib", "error_proto") not in class_names(type(exc)):
        return None
    found = _CODE.search(exception_text(exc))
    if found is None:
        return None
    key = found.group(1).upper()
    code, message = RESPONSE_CODES[key]
    # LOGIN-DELAY states no delay: rate_limited with the default retry_after
    return Classification(code=code, message=message, rule=f"{PLUGIN}:{key}")
