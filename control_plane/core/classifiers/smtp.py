"""``smtplib``: reply codes carried as ``smtp_code``, and a server that hung up.

SMTP reply codes are not HTTP statuses: 535 is an authentication failure, 550 an unknown
mailbox, 421 a server closing the channel. :data:`REPLY_CODES` maps them. Any other 4xx
reply is transient by definition (RFC 5321 4.2.1: greylisting's 450/451, a full queue's
452, a TLS or authentication mechanism unavailable for now, 454): ``network_error``,
retryable. Other codes are ``internal_error`` (a command or policy rejection no baseline
code fits).
"""

from __future__ import annotations

from collections.abc import Mapping

from control_plane.core.classify import (
    Classification,
    TypeRule,
    class_names,
    match_type_rules,
    safe_attr,
)
from control_plane.core.hookspecs import hookimpl

__all__ = ["EXCEPTION_MODULES", "REPLY_CODES", "TRANSIENT", "TYPES", "classify_exception"]

PLUGIN = "smtp"
#: Asked only about exceptions of these modules' classes (runtime.plugins.EXCEPTION_MODULES).
EXCEPTION_MODULES = ("smtplib",)

_AUTH = "the mail server rejected or required the credentials"
_MAILBOX = "the mail server reports that the mailbox does not exist"

#: SMTP reply code -> (baseline code, fixed message).
REPLY_CODES: Mapping[int, tuple[str, str]] = {
    421: ("network_error", "the mail server is closing the connection (service not available)"),
    530: ("auth_failed", _AUTH),
    534: ("auth_failed", _AUTH),
    535: ("auth_failed", _AUTH),
    538: ("auth_failed", _AUTH),
    550: ("not_found", _MAILBOX),
    551: ("not_found", _MAILBOX),
}
#: Any other 4xx reply: the server refused for now; the same command may pass later.
TRANSIENT = ("network_error", "the mail server refused for now (a transient 4xx reply)")
_OTHER = ("internal_error", "the mail server rejected the command")

TYPES: tuple[TypeRule, ...] = (
    # Weak: smtplib raises it for a timeout too, with the TimeoutError as its context.
    TypeRule(
        "smtplib.SMTPServerDisconnected",
        "network_error",
        "the mail server connection was lost",
        weak=True,
    ),
    TypeRule(
        "smtplib.SMTPNotSupportedError",
        "internal_error",
        "the mail server does not support the command or extension",
    ),
)


def _reply(code: object) -> tuple[str, str] | None:
    if not isinstance(code, int) or isinstance(code, bool):
        return None
    found = REPLY_CODES.get(code)
    if found is not None:
        return found
    return TRANSIENT if 400 <= code <= 499 else _OTHER


def _is_smtp(exc: BaseException, name: str) -> bool:
    return ("smtplib", name) in class_names(type(exc))


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """An ``smtplib`` exception by reply code (see :data:`REPLY_CODES`) or type."""
    if not _is_smtp(exc, "SMTPException"):
        return None
    hit: tuple[str, str] | None = None
    if _is_smtp(exc, "SMTPRecipientsRefused"):
        recipients = safe_attr(exc, "recipients")
        codes = set()
        if isinstance(recipients, dict):
            for value in list(recipients.values())[:100]:
                if isinstance(value, tuple) and value:
                    codes.add(value[0])
        answers = {_reply(c) for c in codes}
        hit = answers.pop() if len(answers) == 1 else _OTHER
    elif _is_smtp(exc, "SMTPResponseException"):
        hit = _reply(safe_attr(exc, "smtp_code"))
        if hit is None and _is_smtp(exc, "SMTPConnectError"):
            hit = ("network_error", "the mail server did not greet the client")
    if hit is not None:
        return Classification(code=hit[0], message=hit[1], rule=f"{PLUGIN}:reply")
    return match_type_rules(exc, TYPES, PLUGIN)
