"""``imaplib``: IMAP response codes (RFC 5530) in the text of ``IMAP4.error``, and a
connection the server dropped (``IMAP4.abort``).

``IMAP4.error`` (raised for a ``NO``/``BAD`` answer, and by packs with the server's text)
is classified by the bracketed response code it quotes (:data:`RESPONSE_CODES`); without
one it is not classified. ``IMAP4.abort`` -- the server said ``BYE`` or hung up -- is
``network_error``, weak so that a timeout it wraps is found; ``IMAP4.readonly`` (the
mailbox became read-only) is not a network failure and is not classified.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from control_plane.core.classify import Classification, class_names, exception_text
from control_plane.core.hookspecs import hookimpl

__all__ = ["EXCEPTION_MODULES", "RESPONSE_CODES", "classify_exception"]

PLUGIN = "imap"
#: Asked only about exceptions of these modules' classes (runtime.plugins.EXCEPTION_MODULES).
EXCEPTION_MODULES = ("imaplib",)

_AUTH = "the IMAP server rejected the credentials (failed, not authorized or expired)"

#: IMAP response code -> (baseline code, fixed message).
RESPONSE_CODES: Mapping[str, tuple[str, str]] = {
    "AUTHENTICATIONFAILED": ("auth_failed", _AUTH),
    "AUTHORIZATIONFAILED": ("auth_failed", _AUTH),
    "EXPIRED": ("auth_failed", _AUTH),
    "NONEXISTENT": ("not_found", "the IMAP server reports that the mailbox does not exist"),
    "UNAVAILABLE": ("network_error", "the IMAP server is temporarily unavailable"),
}
_CODE = re.compile(r"\[(" + "|".join(RESPONSE_CODES) + r")\]", re.IGNORECASE)


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """An ``imaplib`` error by response code (:data:`RESPONSE_CODES`), or a dropped
    connection."""
    names = class_names(type(exc))
    if ("imaplib", "error") not in names or ("imaplib", "readonly") in names:
        return None
    if ("imaplib", "abort") in names:
        return Classification(
            code="network_error",
            message="the IMAP server closed the connection",
            rule=f"{PLUGIN}:abort",
            weak=True,
        )
    found = _CODE.search(exception_text(exc))
    if found is None:
        return None
    key = found.group(1).upper()
    code, message = RESPONSE_CODES[key]
    return Classification(code=code, message=message, rule=f"{PLUGIN}:{key}")
