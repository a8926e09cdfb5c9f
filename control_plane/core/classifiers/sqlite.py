"""``sqlite3``: a database another connection or statement holds locked.

``sqlite3.OperationalError`` carries the SQLite result code (``sqlite_errorcode``,
``sqlite_errorname``, Python 3.11+). ``SQLITE_BUSY`` (5: "database is locked", the busy
timeout expired while another connection wrote) and ``SQLITE_LOCKED`` (6: "database
table is locked", a conflict with another statement) pass when the holder finishes:
``timeout``, retryable. Extended codes (``SQLITE_BUSY_SNAPSHOT``, ...) count by their
primary code; an exception without a code is recognised by the same words. Any other
``OperationalError`` is not classified here.

The module is not imported here: the class is recognised by name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from control_plane.core.classify import (
    Classification,
    class_names,
    exception_text,
    safe_attr,
)
from control_plane.core.hookspecs import hookimpl

__all__ = ["EXCEPTION_MODULES", "RESULT_CODES", "classify_exception"]

PLUGIN = "sqlite"
#: Asked only about exceptions of these modules' classes (runtime.plugins.EXCEPTION_MODULES).
EXCEPTION_MODULES = ("sqlite3",)

_LOCKED = "the SQLite database or table is locked by another connection or statement"

#: Primary SQLite result code -> (baseline code, fixed message).
RESULT_CODES: Mapping[int, tuple[str, str]] = {
    5: ("timeout", _LOCKED + " (SQLITE_BUSY: the busy timeout expired)"),
    6: ("timeout", _LOCKED + " (SQLITE_LOCKED)"),
}
_NAMES = {"SQLITE_BUSY": 5, "SQLITE_LOCKED": 6}
#: The texts of those codes, for an exception that carries no code.
_TEXTS = re.compile(r"^database (table |schema )?is locked", re.IGNORECASE)


def _primary(exc: BaseException) -> int | None:
    code = safe_attr(exc, "sqlite_errorcode")
    if isinstance(code, int) and not isinstance(code, bool):
        return code & 0xFF
    name = safe_attr(exc, "sqlite_errorname")
    if isinstance(name, str):
        return _NAMES.get("_".join(name.split("_")[:2]))  # SQLITE_BUSY_SNAPSHOT -> SQLITE_BUSY
    text = _TEXTS.match(exception_text(exc))
    if text is not None:
        return 5 if text.group(1) is None else 6
    return None


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """A locked ``sqlite3`` database (see :data:`RESULT_CODES`)."""
    if ("sqlite3", "OperationalError") not in class_names(type(exc)):
        return None
    primary = _primary(exc)
    found = RESULT_CODES.get(primary) if primary is not None else None
    if found is None:
        return None
    return Classification(code=found[0], message=found[1], rule=f"{PLUGIN}:{primary}")
