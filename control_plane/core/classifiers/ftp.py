"""``ftplib``: the FTP reply code, which the exception carries only as its text's first
three digits (``error_perm("530 Login incorrect.")``).

FTP replies are not HTTP statuses: 530/532 are a refused login, 550 a file or directory
that is unavailable (RFC 959: not found, or no access). Any other 4xx reply is transient
by definition (421 closing, 425/426 data connection, 450/451/452 file busy, local error,
storage): ``network_error``, retryable. Any other 5xx is ``internal_error`` (a command or
name the server will not accept; no baseline code fits).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from control_plane.core.classify import Classification, class_names, exception_text
from control_plane.core.hookspecs import hookimpl

__all__ = ["EXCEPTION_MODULES", "REPLY_CODES", "classify_exception"]

PLUGIN = "ftp"
#: Asked only about exceptions of these modules' classes (runtime.plugins.EXCEPTION_MODULES).
EXCEPTION_MODULES = ("ftplib",)

_AUTH = "the FTP server rejected the login"

#: FTP reply code -> (baseline code, fixed message).
REPLY_CODES: Mapping[int, tuple[str, str]] = {
    530: ("auth_failed", _AUTH),
    532: ("auth_failed", "the FTP server requires an account to store files"),
    550: ("not_found", "the FTP server reports the file or directory is unavailable"),
}
#: Any other 4xx reply: the server refused for now; the same command may pass later.
_TRANSIENT = ("network_error", "the FTP server refused for now (a transient 4xx reply)")
_OTHER = ("internal_error", "the FTP server rejected the command")

_ERRORS = frozenset({("ftplib", "error_perm"), ("ftplib", "error_temp"), ("ftplib", "error_reply")})
_REPLY = re.compile(r"\s*([1-5]\d\d)\b")


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """An ``ftplib`` error by the reply code its text starts with (:data:`REPLY_CODES`)."""
    if not _ERRORS & class_names(type(exc)):
        return None
    found = _REPLY.match(exception_text(exc))
    if found is None:
        return None
    reply = int(found.group(1))
    hit = REPLY_CODES.get(reply)
    if hit is None:
        if 400 <= reply <= 499:
            hit = _TRANSIENT
        elif 500 <= reply <= 599:
            hit = _OTHER
        else:
            return None
    return Classification(code=hit[0], message=hit[1], rule=f"{PLUGIN}:{reply}")
